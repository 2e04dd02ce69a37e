// A tenant's whole portfolio as one unit: an import replaces it in one transaction, an export
// reads it back in import form. Everything the API serves was rendered before it reaches here
// (src/portfolio/import/), so a write only stores JSON text beside the columns it is found by.
import { asc, eq, sql } from 'drizzle-orm';
import { assets, portfolioItems, portfolios, tenants } from '../../db/schema.js';
import { engineOf, type StoreSource } from './engine.js';
import { StoreError } from './errors.js';
import { defaultRandomBytes, type RandomBytes } from './ids.js';
import type { Asset, PageSummary, PortfolioItemKind, PortfolioResponse, ProfileItem } from './portfolioShapes.js';

/** One item as stored: its import form, its API form and what it is found by. */
export interface StoredItem {
  kind: PortfolioItemKind;
  /** Display order within its kind. */
  position: number;
  id: string | null;
  slug: string | null;
  published: boolean;
  /** The item in import form (exported as it is). */
  source: unknown;
  /** The item exactly as its operations answer it. */
  rendered: unknown;
  /** Pages only: the form the list operation answers. */
  summary: PageSummary | null;
}

/** Everything an import writes for a tenant. */
export interface StoredPortfolio {
  published: boolean;
  /** The profile in import form. */
  profileSource: unknown;
  profile: ProfileItem;
  /** The whole published portfolio, as GET /portfolio answers it. */
  document: PortfolioResponse;
  assets: Asset[];
  items: StoredItem[];
  /** When it was written, ms since the epoch. */
  updatedAt: number;
}

/** The import forms read back: what an export is made of. */
export interface PortfolioSources {
  published: boolean;
  profile: unknown;
  assets: Asset[];
  /** Each kind's items in import form, in display order. */
  itemsByKind: Map<PortfolioItemKind, unknown[]>;
}

export interface PortfolioDocumentStore {
  /**
   * Replaces the tenant's whole portfolio in one write transaction, raising its revision.
   * Throws StoreError('tenant_not_found') having written nothing.
   */
  replace(tenantId: string, portfolio: StoredPortfolio): Promise<void>;
  /** Undefined when the tenant has never imported a portfolio; StoreError('tenant_not_found') for an unknown tenant. */
  read(tenantId: string): Promise<PortfolioSources | undefined>;
}

/**
 * The revision of a newly created portfolio row. Random rather than 1: a row deleted with its tenant
 * and created again must not repeat a revision that a reader may still hold an answer for.
 */
function firstRevision(randomBytes: RandomBytes): number {
  return Buffer.from(randomBytes(6)).readUIntBE(0, 6);
}

type TenantArgs = { tenantId: string };

export function createPortfolioDocumentStore(source: StoreSource, options: { randomBytes?: RandomBytes } = {}): PortfolioDocumentStore {
  const randomBytes = options.randomBytes ?? defaultRandomBytes;
  const engine = engineOf(source);
  const { orm } = engine;
  const tenantId = sql.placeholder('tenantId');

  const selectTenant = engine.statement<unknown, TenantArgs>(orm.select({ id: tenants.id }).from(tenants).where(eq(tenants.id, tenantId)));
  const deleteItems = engine.statement<unknown, TenantArgs>(orm.delete(portfolioItems).where(eq(portfolioItems.tenantId, tenantId)));
  const deleteAssets = engine.statement<unknown, TenantArgs>(orm.delete(assets).where(eq(assets.tenantId, tenantId)));
  const portfolioRow = {
    published: sql.placeholder('published'),
    profileSourceJson: sql.placeholder('profileSourceJson'),
    profileRenderedJson: sql.placeholder('profileRenderedJson'),
    documentJson: sql.placeholder('documentJson'),
    updatedAt: sql.placeholder('updatedAt'),
  };
  // The builder's update set takes SQL, not bare placeholders: the same values, wrapped.
  const portfolioUpdate = Object.fromEntries(Object.entries(portfolioRow).map(([column, value]) => [column, sql`${value}`]));
  const upsertPortfolio = engine.statement(
    orm
      .insert(portfolios)
      .values({ tenantId, ...portfolioRow, revision: sql.placeholder('firstRevision') })
      .onConflictDoUpdate({ target: portfolios.tenantId, set: { ...portfolioUpdate, revision: sql`${portfolios.revision} + 1` } }),
  );
  const insertAsset = engine.statement(
    orm.insert(assets).values({
      tenantId,
      position: sql.placeholder('position'),
      id: sql.placeholder('id'),
      url: sql.placeholder('url'),
      altText: sql.placeholder('altText'),
      mimeType: sql.placeholder('mimeType'),
      width: sql.placeholder('width'),
      height: sql.placeholder('height'),
    }),
  );
  const insertItem = engine.statement(
    orm.insert(portfolioItems).values({
      tenantId,
      kind: sql.placeholder('kind'),
      position: sql.placeholder('position'),
      id: sql.placeholder('id'),
      slug: sql.placeholder('slug'),
      published: sql.placeholder('published'),
      sourceJson: sql.placeholder('sourceJson'),
      renderedJson: sql.placeholder('renderedJson'),
      summaryJson: sql.placeholder('summaryJson'),
    }),
  );

  const selectPortfolio = engine.statement<{ published: number; profileSourceJson: string }, TenantArgs>(
    orm
      .select({ published: portfolios.published, profileSourceJson: portfolios.profileSourceJson })
      .from(portfolios)
      .where(eq(portfolios.tenantId, tenantId)),
  );
  const selectAssets = engine.statement<Asset, TenantArgs>(
    orm
      .select({ id: assets.id, url: assets.url, altText: assets.altText, mimeType: assets.mimeType, width: assets.width, height: assets.height })
      .from(assets)
      .where(eq(assets.tenantId, tenantId))
      .orderBy(asc(assets.position)),
  );
  const selectItemSources = engine.statement<unknown, TenantArgs, [kind: PortfolioItemKind, sourceJson: string]>(
    orm
      .select({ kind: portfolioItems.kind, sourceJson: portfolioItems.sourceJson })
      .from(portfolioItems)
      .where(eq(portfolioItems.tenantId, tenantId))
      .orderBy(asc(portfolioItems.kind), asc(portfolioItems.position)),
  );

  const requireTenant = async (id: string): Promise<void> => {
    if (!(await selectTenant.row({ tenantId: id }))) throw new StoreError('tenant_not_found', `No tenant with id "${id}".`);
  };

  return {
    async replace(id, portfolio) {
      const revision = firstRevision(randomBytes);
      await engine.write(async () => {
        await requireTenant(id);
        await deleteItems.run({ tenantId: id });
        await deleteAssets.run({ tenantId: id });
        await upsertPortfolio.run({
          tenantId: id,
          published: portfolio.published ? 1 : 0,
          profileSourceJson: JSON.stringify(portfolio.profileSource),
          profileRenderedJson: JSON.stringify(portfolio.profile),
          documentJson: JSON.stringify(portfolio.document),
          updatedAt: portfolio.updatedAt,
          firstRevision: revision,
        });
        for (const [position, asset] of portfolio.assets.entries()) await insertAsset.run({ tenantId: id, position, ...asset });
        for (const item of portfolio.items) {
          await insertItem.run({
            tenantId: id,
            kind: item.kind,
            position: item.position,
            id: item.id,
            slug: item.slug,
            published: item.published ? 1 : 0,
            sourceJson: JSON.stringify(item.source),
            renderedJson: JSON.stringify(item.rendered),
            summaryJson: item.summary === null ? null : JSON.stringify(item.summary),
          });
        }
      });
    },

    // Export reads its four selects in one snapshot: never half an import.
    read(id) {
      return engine.snapshot(async (): Promise<PortfolioSources | undefined> => {
        await requireTenant(id);
        const portfolio = await selectPortfolio.object({ tenantId: id });
        if (!portfolio) return undefined;
        const itemsByKind = new Map<PortfolioItemKind, unknown[]>();
        for (const [kind, sourceJson] of await selectItemSources.rows({ tenantId: id })) {
          const list = itemsByKind.get(kind) ?? [];
          list.push(JSON.parse(sourceJson));
          itemsByKind.set(kind, list);
        }
        return {
          published: portfolio.published === 1,
          profile: JSON.parse(portfolio.profileSourceJson),
          assets: await selectAssets.objects({ tenantId: id }),
          itemsByKind,
        };
      });
    },
  };
}
