// The read side of published portfolios, used by the request handlers. Everything served was
// rendered at import (sanitized, assets resolved), so a read is one or two indexed selects of
// JSON text; every statement is compiled once per reader.
//
// Answers are also kept encoded in the process's bounded cache, each under the revision of the
// portfolio it was built from: each call first reads the revision (one indexed select), so a write
// by any connection or process is served on the next call. Every write of a portfolio (an import,
// see portfolioDocuments.ts) changes it.
import { and, asc, count, eq, sql } from 'drizzle-orm';
import { portfolioItems, portfolios } from '../../db/schema.js';
import type { BoundedCache } from './boundedCache.js';
import type { CachedRows } from './cachedRows.js';
import { engineOf, type StoreSource } from './engine.js';
import type {
  ListedItemByKind,
  PortfolioItemKind,
  ProfileItem,
  SlugKind,
} from './portfolioShapes.js';

export interface PageRequest {
  limit: number;
  offset: number;
}

export interface PortfolioReader {
  /** The whole published portfolio as UTF-8 JSON bytes, kept per revision; undefined when the tenant has no published portfolio. */
  publishedDocumentBytes(tenantId: string): Promise<Buffer | undefined>;
  /** Undefined when the tenant has no published portfolio. */
  profile(tenantId: string): Promise<ProfileItem | undefined>;
  /**
   * One page of a kind's published items in display order, with how many published items the
   * kind has (pages are listed as `PageSummary`, without blocks), as `encode` turns it into the
   * answer's bytes; kept per revision and page, so `encode` must depend on nothing but its
   * argument and the page. Undefined when the tenant has no published portfolio.
   */
  encodedListPage<K extends PortfolioItemKind>(
    tenantId: string,
    kind: K,
    page: PageRequest,
    encode: (listed: { items: ListedItemByKind[K][]; total: number }) => Buffer,
  ): Promise<Buffer | undefined>;
  /**
   * A published item by slug as UTF-8 JSON bytes, kept per revision. Undefined when the tenant has
   * no published portfolio, or the item is missing or unpublished.
   */
  publishedBySlugBytes(tenantId: string, kind: SlugKind, slug: string): Promise<Buffer | undefined>;
}

export interface PortfolioReaderOptions {
  /** The process's cache of encoded answers; the reader keeps its answers in a space of its own. */
  cache: BoundedCache;
  /** Revisions kept in memory until a change of `portfolios` is announced (PostgreSQL; src/store/cachedRows.ts). */
  revisions?: CachedRows<number>;
}

type TenantArgs = { tenantId: string };
type ItemArgs = TenantArgs & { kind: PortfolioItemKind };

/** The reader of an engine, its statements compiled once; create one per engine, at start-up. */
export function createPortfolioReader(source: StoreSource, { cache, revisions }: PortfolioReaderOptions): PortfolioReader {
  const engine = engineOf(source);
  const { orm } = engine;
  const forTenant = sql.placeholder('tenantId');
  const isPublished = and(eq(portfolios.tenantId, forTenant), eq(portfolios.published, sql`1`));
  const itemFilter = and(
    eq(portfolioItems.tenantId, forTenant),
    eq(portfolioItems.kind, sql.placeholder('kind')),
    eq(portfolioItems.published, sql`1`),
  );

  // Every statement runs per request: compiled once, rows read as arrays.
  const selectRevision = engine.statement<unknown, TenantArgs>(orm.select({ revision: portfolios.revision }).from(portfolios).where(isPublished));
  const selectProfile = engine.statement<unknown, TenantArgs>(orm.select({ json: portfolios.profileRenderedJson }).from(portfolios).where(isPublished));
  const selectRevisionAndDocument = engine.statement<unknown, TenantArgs, [revision: number, json: string]>(
    orm.select({ revision: portfolios.revision, json: portfolios.documentJson }).from(portfolios).where(isPublished),
  );
  const countItems = engine.statement<unknown, ItemArgs>(orm.select({ total: count() }).from(portfolioItems).where(itemFilter));
  const selectPage = (column: typeof portfolioItems.renderedJson | typeof portfolioItems.summaryJson) =>
    engine.statement<unknown, ItemArgs & { limit: number; offset: number }, [json: string | null]>(
      orm
        .select({ json: column })
        .from(portfolioItems)
        .where(itemFilter)
        .orderBy(asc(portfolioItems.position))
        .limit(sql.placeholder('limit'))
        .offset(sql.placeholder('offset')),
    );
  const selectItems = selectPage(portfolioItems.renderedJson);
  const selectPageSummaries = selectPage(portfolioItems.summaryJson);
  const selectRevisionAndItemBySlug = engine.statement<unknown, ItemArgs & { slug: string }, [revision: number, json: string]>(
    orm
      .select({ revision: portfolios.revision, json: portfolioItems.renderedJson })
      .from(portfolioItems)
      .innerJoin(portfolios, and(eq(portfolios.tenantId, portfolioItems.tenantId), eq(portfolios.published, sql`1`)))
      .where(and(itemFilter, eq(portfolioItems.slug, sql.placeholder('slug')))),
  );
  const revisionOf = async (id: string) => (await selectRevision.value({ tenantId: id })) as number | undefined;
  const readCommittedRevision = (id: string) => engine.read(() => revisionOf(id));
  const committedRevisionOf = revisions ? (id: string) => revisions.get(id, () => readCommittedRevision(id)) : readCommittedRevision;

  // A list is a revision read, a count and a select: one snapshot gives them one view, so a
  // concurrent import never shows a total that disagrees with the items, and the page is kept
  // under the revision it was read at.
  const listInSnapshot = (id: string, kind: PortfolioItemKind, limit: number, offset: number) =>
    engine.snapshot(async () => {
      const revision = await revisionOf(id);
      if (revision === undefined) return undefined;
      const total = ((await countItems.value({ tenantId: id, kind })) as number | undefined) ?? 0;
      const statement = kind === 'page' ? selectPageSummaries : selectItems;
      const rows = offset >= total ? [] : await statement.rows({ tenantId: id, kind, limit, offset });
      return { revision, items: rows.map(([json]) => JSON.parse(json ?? 'null') as unknown), total };
    });

  // Keys start with the tenant id, which holds no NUL, so no tenant's key can name another's answer.
  const answers = cache.space('portfolio answers');
  const key = (tenantId: string, query: string) => `${tenantId}\u0000${query}`;

  return {
    async publishedDocumentBytes(tenantId) {
      const revision = await committedRevisionOf(tenantId);
      if (revision === undefined) return undefined;
      const documentKey = key(tenantId, 'document');
      const kept = answers.get(documentKey, revision);
      if (kept) return kept;
      // Revision and text from one row read, so a concurrent write cannot pair one with the other.
      const row = await engine.read(() => selectRevisionAndDocument.row({ tenantId }));
      return row && answers.keep(documentKey, row[0], Buffer.from(row[1], 'utf8'));
    },
    async profile(tenantId) {
      const json = (await engine.read(() => selectProfile.value({ tenantId }))) as string | undefined;
      return json === undefined ? undefined : (JSON.parse(json) as ProfileItem);
    },
    async encodedListPage<K extends PortfolioItemKind>(
      tenantId: string,
      kind: K,
      { limit, offset }: PageRequest,
      encode: (listed: { items: ListedItemByKind[K][]; total: number }) => Buffer,
    ) {
      const revision = await committedRevisionOf(tenantId);
      if (revision === undefined) return undefined;
      const pageKey = key(tenantId, `list ${kind} ${limit} ${offset}`);
      const kept = answers.get(pageKey, revision);
      if (kept) return kept;
      const listed = await listInSnapshot(tenantId, kind, limit, offset);
      if (!listed) return undefined;
      return answers.keep(pageKey, listed.revision, encode({ items: listed.items as ListedItemByKind[K][], total: listed.total }));
    },
    async publishedBySlugBytes(tenantId, kind, slug) {
      const revision = await committedRevisionOf(tenantId);
      if (revision === undefined) return undefined;
      const itemKey = key(tenantId, `item ${kind} ${slug}`);
      const kept = answers.get(itemKey, revision);
      if (kept) return kept;
      // Only items that exist are kept, so asking for made-up slugs costs no memory.
      const row = await engine.read(() => selectRevisionAndItemBySlug.row({ tenantId, kind, slug }));
      return row && answers.keep(itemKey, row[0], Buffer.from(row[1], 'utf8'));
    },
  };
}
