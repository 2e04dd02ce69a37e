// A tenant's whole portfolio as one unit: an import replaces it in one transaction, an export
// reads it back in import form. Everything the API serves was rendered before it reaches here
// (src/portfolio/import/), so a write only stores JSON text beside the columns it is found by.
import type BetterSqlite3 from 'better-sqlite3';
import { asc, eq, sql } from 'drizzle-orm';
import { assets, portfolioItems, portfolios, tenants } from '../../db/schema.js';
import { runInImmediateTransaction } from './database.js';
import { drizzleFor } from './drizzle.js';
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
   * Replaces the tenant's whole portfolio in one IMMEDIATE transaction, raising its revision.
   * Throws StoreError('tenant_not_found') having written nothing.
   */
  replace(tenantId: string, portfolio: StoredPortfolio): void;
  /** Undefined when the tenant has never imported a portfolio; StoreError('tenant_not_found') for an unknown tenant. */
  read(tenantId: string): PortfolioSources | undefined;
}

/**
 * The revision of a newly created portfolio row. Random rather than 1: a row deleted with its tenant
 * and created again must not repeat a revision that a reader may still hold an answer for.
 */
function firstRevision(randomBytes: RandomBytes): number {
  return Buffer.from(randomBytes(6)).readUIntBE(0, 6);
}

export function createPortfolioDocumentStore(
  db: BetterSqlite3.Database,
  options: { randomBytes?: RandomBytes } = {},
): PortfolioDocumentStore {
  const randomBytes = options.randomBytes ?? defaultRandomBytes;
  const orm = drizzleFor(db);
  const tenantId = sql.placeholder('tenantId');

  const selectTenant = orm.select({ id: tenants.id }).from(tenants).where(eq(tenants.id, tenantId)).prepare();
  const deleteItems = orm.delete(portfolioItems).where(eq(portfolioItems.tenantId, tenantId)).prepare();
  const deleteAssets = orm.delete(assets).where(eq(assets.tenantId, tenantId)).prepare();
  const portfolioRow = {
    published: sql.placeholder('published'),
    profileSourceJson: sql.placeholder('profileSourceJson'),
    profileRenderedJson: sql.placeholder('profileRenderedJson'),
    documentJson: sql.placeholder('documentJson'),
    updatedAt: sql.placeholder('updatedAt'),
  };
  // The builder's update set takes SQL, not bare placeholders: the same values, wrapped.
  const portfolioUpdate = Object.fromEntries(Object.entries(portfolioRow).map(([column, value]) => [column, sql`${value}`]));
  const upsertPortfolio = orm
    .insert(portfolios)
    .values({ tenantId, ...portfolioRow, revision: sql.placeholder('firstRevision') })
    .onConflictDoUpdate({ target: portfolios.tenantId, set: { ...portfolioUpdate, revision: sql`${portfolios.revision} + 1` } })
    .prepare();
  const insertAsset = orm
    .insert(assets)
    .values({
      tenantId,
      position: sql.placeholder('position'),
      id: sql.placeholder('id'),
      url: sql.placeholder('url'),
      altText: sql.placeholder('altText'),
      mimeType: sql.placeholder('mimeType'),
      width: sql.placeholder('width'),
      height: sql.placeholder('height'),
    })
    .prepare();
  const insertItem = orm
    .insert(portfolioItems)
    .values({
      tenantId,
      kind: sql.placeholder('kind'),
      position: sql.placeholder('position'),
      id: sql.placeholder('id'),
      slug: sql.placeholder('slug'),
      published: sql.placeholder('published'),
      sourceJson: sql.placeholder('sourceJson'),
      renderedJson: sql.placeholder('renderedJson'),
      summaryJson: sql.placeholder('summaryJson'),
    })
    .prepare();

  const selectPortfolio = orm
    .select({ published: portfolios.published, profileSourceJson: portfolios.profileSourceJson })
    .from(portfolios)
    .where(eq(portfolios.tenantId, tenantId))
    .prepare();
  const selectAssets = orm
    .select({ id: assets.id, url: assets.url, altText: assets.altText, mimeType: assets.mimeType, width: assets.width, height: assets.height })
    .from(assets)
    .where(eq(assets.tenantId, tenantId))
    .orderBy(asc(assets.position))
    .prepare();
  const selectItemSources = orm
    .select({ kind: portfolioItems.kind, sourceJson: portfolioItems.sourceJson })
    .from(portfolioItems)
    .where(eq(portfolioItems.tenantId, tenantId))
    .orderBy(asc(portfolioItems.kind), asc(portfolioItems.position))
    .prepare();

  const requireTenant = (id: string): void => {
    if (!selectTenant.get({ tenantId: id })) throw new StoreError('tenant_not_found', `No tenant with id "${id}".`);
  };

  // Export reads its four selects in one read transaction: one snapshot, never half an import.
  const readInSnapshot = db.transaction((id: string): PortfolioSources | undefined => {
    requireTenant(id);
    const portfolio = selectPortfolio.get({ tenantId: id });
    if (!portfolio) return undefined;
    const itemsByKind = new Map<PortfolioItemKind, unknown[]>();
    for (const row of selectItemSources.all({ tenantId: id })) {
      const list = itemsByKind.get(row.kind) ?? [];
      list.push(JSON.parse(row.sourceJson));
      itemsByKind.set(row.kind, list);
    }
    return {
      published: portfolio.published === 1,
      profile: JSON.parse(portfolio.profileSourceJson),
      assets: selectAssets.all({ tenantId: id }),
      itemsByKind,
    };
  });

  return {
    replace(id, portfolio) {
      runInImmediateTransaction(db, () => {
        requireTenant(id);
        deleteItems.run({ tenantId: id });
        deleteAssets.run({ tenantId: id });
        upsertPortfolio.run({
          tenantId: id,
          published: portfolio.published ? 1 : 0,
          profileSourceJson: JSON.stringify(portfolio.profileSource),
          profileRenderedJson: JSON.stringify(portfolio.profile),
          documentJson: JSON.stringify(portfolio.document),
          updatedAt: portfolio.updatedAt,
          firstRevision: firstRevision(randomBytes),
        });
        portfolio.assets.forEach((asset, position) => insertAsset.run({ tenantId: id, position, ...asset }));
        for (const item of portfolio.items) {
          insertItem.run({
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
    read(id) {
      return readInSnapshot(id);
    },
  };
}
