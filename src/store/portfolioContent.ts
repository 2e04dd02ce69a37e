// The read side of published portfolios, used by the request handlers. Everything served was
// rendered at import (sanitized, assets resolved), so a read is one or two indexed selects of
// JSON text; every statement is compiled once per reader (see compiledStatement).
//
// Answers are also kept encoded in the process's bounded cache, each under the revision of the
// portfolio it was built from: each call first reads the revision (one indexed select), so a write
// by any connection or process is served on the next call. Every write of a portfolio (an import,
// see portfolioDocuments.ts) changes it.
import type BetterSqlite3 from 'better-sqlite3';
import { and, asc, count, eq, sql } from 'drizzle-orm';
import { portfolioItems, portfolios } from '../../db/schema.js';
import type { BoundedCache } from './boundedCache.js';
import { compiledStatement, drizzleFor } from './drizzle.js';
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
  publishedDocumentBytes(tenantId: string): Buffer | undefined;
  /** Undefined when the tenant has no published portfolio. */
  profile(tenantId: string): ProfileItem | undefined;
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
  ): Buffer | undefined;
  /**
   * A published item by slug as UTF-8 JSON bytes, kept per revision. Undefined when the tenant has
   * no published portfolio, or the item is missing or unpublished.
   */
  publishedBySlugBytes(tenantId: string, kind: SlugKind, slug: string): Buffer | undefined;
}

export interface PortfolioReaderOptions {
  /** The process's cache of encoded answers; the reader keeps its answers in a space of its own. */
  cache: BoundedCache;
}

/** The reader of `db`, its statements compiled once; create one per connection, at start-up. */
export function createPortfolioReader(db: BetterSqlite3.Database, { cache }: PortfolioReaderOptions): PortfolioReader {
  const orm = drizzleFor(db);
  const forTenant = sql.placeholder('tenantId');
  const isPublished = and(eq(portfolios.tenantId, forTenant), eq(portfolios.published, sql`1`));
  const itemFilter = and(
    eq(portfolioItems.tenantId, forTenant),
    eq(portfolioItems.kind, sql.placeholder('kind')),
    eq(portfolioItems.published, sql`1`),
  );

  // Every statement runs per request: compiled once, rows read as arrays.
  const selectRevision = compiledStatement<{ tenantId: string }>(db, orm.select({ revision: portfolios.revision }).from(portfolios).where(isPublished));
  const selectProfile = compiledStatement<{ tenantId: string }>(db, orm.select({ json: portfolios.profileRenderedJson }).from(portfolios).where(isPublished));
  const selectRevisionAndDocument = compiledStatement<{ tenantId: string }, [revision: number, json: string]>(
    db,
    orm.select({ revision: portfolios.revision, json: portfolios.documentJson }).from(portfolios).where(isPublished),
  );
  const countItems = compiledStatement<{ tenantId: string; kind: PortfolioItemKind }>(
    db,
    orm.select({ total: count() }).from(portfolioItems).where(itemFilter),
  );
  const selectPage = (column: typeof portfolioItems.renderedJson | typeof portfolioItems.summaryJson) =>
    compiledStatement<{ tenantId: string; kind: PortfolioItemKind; limit: number; offset: number }, [json: string | null]>(
      db,
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
  const selectRevisionAndItemBySlug = compiledStatement<{ tenantId: string; kind: SlugKind; slug: string }, [revision: number, json: string]>(
    db,
    orm
      .select({ revision: portfolios.revision, json: portfolioItems.renderedJson })
      .from(portfolioItems)
      .innerJoin(portfolios, and(eq(portfolios.tenantId, portfolioItems.tenantId), eq(portfolios.published, sql`1`)))
      .where(and(itemFilter, eq(portfolioItems.slug, sql.placeholder('slug')))),
  );
  const revisionOf = (id: string) => selectRevision.value({ tenantId: id }) as number | undefined;

  // A list is a revision read, a count and a select: one read transaction gives them one snapshot,
  // so a concurrent import never shows a total that disagrees with the items, and the page is
  // kept under the revision it was read at.
  const listInSnapshot = db.transaction(
    (id: string, kind: PortfolioItemKind, limit: number, offset: number) => {
      const revision = revisionOf(id);
      if (revision === undefined) return undefined;
      const total = (countItems.value({ tenantId: id, kind }) as number | undefined) ?? 0;
      const statement = kind === 'page' ? selectPageSummaries : selectItems;
      const rows = offset >= total ? [] : statement.rows({ tenantId: id, kind, limit, offset });
      return { revision, items: rows.map(([json]) => JSON.parse(json ?? 'null') as unknown), total };
    },
  );

  // Keys start with the tenant id, which holds no NUL, so no tenant's key can name another's answer.
  const answers = cache.space('portfolio answers');
  const key = (tenantId: string, query: string) => `${tenantId}\u0000${query}`;

  return {
    publishedDocumentBytes(tenantId) {
      const revision = revisionOf(tenantId);
      if (revision === undefined) return undefined;
      const documentKey = key(tenantId, 'document');
      const kept = answers.get(documentKey, revision);
      if (kept) return kept;
      // Revision and text from one row read, so a concurrent write cannot pair one with the other.
      const row = selectRevisionAndDocument.row({ tenantId });
      return row && answers.keep(documentKey, row[0], Buffer.from(row[1], 'utf8'));
    },
    profile(tenantId) {
      const json = selectProfile.value({ tenantId }) as string | undefined;
      return json === undefined ? undefined : (JSON.parse(json) as ProfileItem);
    },
    encodedListPage<K extends PortfolioItemKind>(
      tenantId: string,
      kind: K,
      { limit, offset }: PageRequest,
      encode: (listed: { items: ListedItemByKind[K][]; total: number }) => Buffer,
    ) {
      const revision = revisionOf(tenantId);
      if (revision === undefined) return undefined;
      const pageKey = key(tenantId, `list ${kind} ${limit} ${offset}`);
      const kept = answers.get(pageKey, revision);
      if (kept) return kept;
      const listed = listInSnapshot(tenantId, kind, limit, offset);
      if (!listed) return undefined;
      return answers.keep(pageKey, listed.revision, encode({ items: listed.items as ListedItemByKind[K][], total: listed.total }));
    },
    publishedBySlugBytes(tenantId, kind, slug) {
      const revision = revisionOf(tenantId);
      if (revision === undefined) return undefined;
      const itemKey = key(tenantId, `item ${kind} ${slug}`);
      const kept = answers.get(itemKey, revision);
      if (kept) return kept;
      // Only items that exist are kept, so asking for made-up slugs costs no memory.
      const row = selectRevisionAndItemBySlug.row({ tenantId, kind, slug });
      return row && answers.keep(itemKey, row[0], Buffer.from(row[1], 'utf8'));
    },
  };
}
