// Encoded list pages kept in the process's bounded cache and served again while the listed
// collection is unchanged.
// Triggers raise a slot of `collection_revisions` in the transaction of every write to a versioned
// resource's table (migrations 0013 and 0015; PostgreSQL 0002 and 0005), and a collection's revision is the sum of its
// slots: every commit raises it. So one indexed read per request tells whether a kept page still holds,
// whichever process or code path wrote. The revision is read before the page: rows read after it
// are never older than it, so a page kept under that revision is at worst rebuilt once too often,
// never served stale, and no read transaction is needed. A page that shows its rows as of the
// instant it is read (contracts past their expiry, connectors past their credential's) is kept
// only until the first instant it would read otherwise.
// The revision itself is read again only once its collection may have changed (src/store/cachedRows.ts:
// on SQLite when the engine's change stamp of collection_revisions moved, a write of this connection
// at once, another process's commit from the next turn of the event loop; on PostgreSQL when a
// write to a collection was announced, at once for this process's own writes, within the bound of
// CACHED_ROW_MAX_AGE_MS for others').
import { and, eq, sql } from 'drizzle-orm';
import { collectionRevisions } from '../../db/schema.js';
import type { BoundedCache } from './boundedCache.js';
import { changesOfStamp, createCachedRows, type CachedRowChanges } from './cachedRows.js';
import { engineOf, type StoreSource } from './engine.js';
import type { listedCollections } from './revisionTriggers.js';

export type ListedCollection = (typeof listedCollections)[number];

/** A page to keep: what to encode, and the first instant it may read otherwise without any write (none: never). */
export interface PageToKeep {
  body: unknown;
  shownUntil?: number;
}

export interface ListPageCacheOptions {
  /** The process's cache of encoded answers; the pages are kept in a space of their own. */
  cache: BoundedCache;
  /** Most pages kept across all workspaces (least recently used dropped first); 0 keeps none. */
  maxPages?: number;
  /** The announced changes (listenForCachedRowChanges); without them, SQLite's change stamp alone, and PostgreSQL reads the revision every time. */
  changes?: CachedRowChanges;
  now?: () => number;
}

export interface ListPageCache {
  /**
   * The encoded page for `query` (a key naming every parameter that shapes the page): the kept
   * bytes while the collection's revision is the one they were built at (and, given the instant
   * `at`, while they still hold then), else `build()`'s page, encoded and kept. `build` throws (or
   * rejects) to refuse the request.
   */
  page(workspaceId: string, collection: ListedCollection, query: string, build: () => PageToKeep | Promise<PageToKeep>, at?: number): Promise<Buffer>;
}

export function createListPageCache(source: StoreSource, { cache, maxPages = 512, changes, now = Date.now }: ListPageCacheOptions): ListPageCache {
  // Keeping nothing, a page needs no revision either.
  if (maxPages === 0) return { page: async (_workspaceId, _collection, _query, build) => Buffer.from(JSON.stringify((await build()).body)) };
  const engine = engineOf(source);
  const selectRevision = engine.statement<unknown, { workspaceId: string; collection: ListedCollection }, [number]>(
    engine.orm
      // sum() of bigints is numeric on PostgreSQL, which pg hands over as a string.
      .select({ revision: sql<number>`cast(sum(${collectionRevisions.revision}) as bigint)` })
      .from(collectionRevisions)
      .where(and(eq(collectionRevisions.workspaceId, sql.placeholder('workspaceId')), eq(collectionRevisions.collection, sql.placeholder('collection')))),
  );
  const pages = cache.space('list pages', { maxEntries: maxPages });
  const revisions = createCachedRows<number>(changes ?? changesOfStamp(engine.changeStamp), ['collection_revisions'], { now, maxEntries: maxPages });
  const currentRevision = (workspaceId: string, collection: ListedCollection): Promise<number> =>
    revisions.get(`${workspaceId}\u0000${collection}`, async () => ((await selectRevision.value({ workspaceId, collection })) as number | undefined) ?? 0) as Promise<number>;

  return {
    async page(workspaceId, collection, query, build, at) {
      const key = `${workspaceId}\u0000${collection}\u0000${query}`;
      // Committed only: a revision raised by a change that then rolls back would be raised again by another change.
      const revision = await engine.read(() => currentRevision(workspaceId, collection));
      const kept = pages.get(key, revision, at);
      if (kept !== undefined) return kept;
      const { body, shownUntil } = await build();
      return pages.keep(key, revision, Buffer.from(JSON.stringify(body)), shownUntil);
    },
  };
}
