// The read side of published portfolios, used by the request handlers. Everything served was
// rendered at import (sanitized, assets resolved), so a read is one or two indexed selects of
// JSON text and a parse; every statement is prepared once per database connection.
import type BetterSqlite3 from 'better-sqlite3';
import { and, asc, count, eq, sql } from 'drizzle-orm';
import { portfolioItems, portfolios } from '../../db/schema.js';
import { drizzleFor } from './drizzle.js';
import type {
  ListedItemByKind,
  PortfolioItemKind,
  PortfolioResponse,
  ProfileItem,
  SlugItemByKind,
  SlugKind,
} from './portfolioShapes.js';

export interface PageRequest {
  limit: number;
  offset: number;
}

export interface PortfolioReader {
  /** The whole published portfolio; undefined when the tenant has no published portfolio. */
  publishedDocument(tenantId: string): PortfolioResponse | undefined;
  /** The same as JSON text, for callers that send it without parsing. */
  publishedDocumentJson(tenantId: string): string | undefined;
  /** Undefined when the tenant has no published portfolio. */
  profile(tenantId: string): ProfileItem | undefined;
  /**
   * One page of a kind's published items in display order, and how many published items the kind
   * has. Pages are listed as `PageSummary` (no blocks). Undefined when the tenant has no
   * published portfolio.
   */
  listPublished<K extends PortfolioItemKind>(
    tenantId: string,
    kind: K,
    page: PageRequest,
  ): { items: ListedItemByKind[K][]; total: number } | undefined;
  /** Undefined when the tenant has no published portfolio, or the item is missing or unpublished. */
  publishedBySlug<K extends SlugKind>(tenantId: string, kind: K, slug: string): SlugItemByKind[K] | undefined;
}

const readers = new WeakMap<BetterSqlite3.Database, PortfolioReader>();

/** The reader bound to `db`, created (and its statements prepared) once per connection. */
export function createPortfolioReader(db: BetterSqlite3.Database): PortfolioReader {
  const existing = readers.get(db);
  if (existing) return existing;

  const orm = drizzleFor(db);
  const isPublished = and(eq(portfolios.tenantId, sql.placeholder('tenantId')), eq(portfolios.published, 1));
  const itemFilter = and(
    eq(portfolioItems.tenantId, sql.placeholder('tenantId')),
    eq(portfolioItems.kind, sql.placeholder('kind')),
    eq(portfolioItems.published, 1),
  );

  const selectDocument = orm.select({ json: portfolios.documentJson }).from(portfolios).where(isPublished).prepare();
  const selectProfile = orm
    .select({ json: portfolios.profileRenderedJson })
    .from(portfolios)
    .where(isPublished)
    .prepare();
  const selectPublishedFlag = orm.select({ published: portfolios.published }).from(portfolios).where(isPublished).prepare();
  const countItems = orm.select({ total: count() }).from(portfolioItems).where(itemFilter).prepare();
  const selectPage = (column: typeof portfolioItems.renderedJson | typeof portfolioItems.summaryJson) =>
    orm
      .select({ json: column })
      .from(portfolioItems)
      .where(itemFilter)
      .orderBy(asc(portfolioItems.position))
      .limit(sql.placeholder('limit'))
      .offset(sql.placeholder('offset'))
      .prepare();
  const selectItems = selectPage(portfolioItems.renderedJson);
  const selectPageSummaries = selectPage(portfolioItems.summaryJson);
  const selectBySlug = orm
    .select({ json: portfolioItems.renderedJson })
    .from(portfolioItems)
    .innerJoin(
      portfolios,
      and(eq(portfolios.tenantId, portfolioItems.tenantId), eq(portfolios.published, 1)),
    )
    .where(and(itemFilter, eq(portfolioItems.slug, sql.placeholder('slug'))))
    .prepare();

  // A list is a flag check, a count and a select: one read transaction gives them one snapshot,
  // so a concurrent import never shows a total that disagrees with the items.
  const listInSnapshot = db.transaction(
    (tenantId: string, kind: PortfolioItemKind, limit: number, offset: number) => {
      if (!selectPublishedFlag.get({ tenantId })) return undefined;
      const total = countItems.get({ tenantId, kind })?.total ?? 0;
      const statement = kind === 'page' ? selectPageSummaries : selectItems;
      const rows = offset >= total ? [] : statement.all({ tenantId, kind, limit, offset });
      return { items: rows.map((row) => JSON.parse(row.json ?? 'null') as unknown), total };
    },
  );

  const reader: PortfolioReader = {
    publishedDocument(tenantId) {
      const row = selectDocument.get({ tenantId });
      return row ? (JSON.parse(row.json) as PortfolioResponse) : undefined;
    },
    publishedDocumentJson(tenantId) {
      return selectDocument.get({ tenantId })?.json;
    },
    profile(tenantId) {
      const row = selectProfile.get({ tenantId });
      return row ? (JSON.parse(row.json) as ProfileItem) : undefined;
    },
    listPublished<K extends PortfolioItemKind>(tenantId: string, kind: K, { limit, offset }: PageRequest) {
      return listInSnapshot(tenantId, kind, limit, offset) as { items: ListedItemByKind[K][]; total: number } | undefined;
    },
    publishedBySlug<K extends SlugKind>(tenantId: string, kind: K, slug: string) {
      const row = selectBySlug.get({ tenantId, kind, slug });
      return row ? (JSON.parse(row.json) as SlugItemByKind[K]) : undefined;
    },
  };
  readers.set(db, reader);
  return reader;
}
