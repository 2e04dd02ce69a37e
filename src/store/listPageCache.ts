// Encoded list pages kept in the process's bounded cache and served again while the listed
// collection is unchanged.
// Triggers raise `collection_revisions` in the transaction of every write to tasks or projects
// (migration 0004), so one indexed read per request tells whether a kept page still holds,
// whichever process or code path wrote. A page is built and its revision read in one snapshot.
import type BetterSqlite3 from 'better-sqlite3';
import type { BoundedCache } from './boundedCache.js';

export type ListedCollection = 'tasks' | 'projects';

export interface ListPageCacheOptions {
  /** The process's cache of encoded answers; the pages are kept in a space of their own. */
  cache: BoundedCache;
  /** Most pages kept across all workspaces (least recently used dropped first); 0 keeps none. */
  maxPages?: number;
}

export interface ListPageCache {
  /**
   * The encoded page for `query` (a key naming every parameter that shapes the page): the kept
   * bytes while the collection's revision is the one they were built at, else `build()`'s answer,
   * built in one read snapshot with the revision and kept. `build` throws to refuse the request.
   */
  page(workspaceId: string, collection: ListedCollection, query: string, build: () => unknown): Buffer;
}

export function createListPageCache(db: BetterSqlite3.Database, { cache, maxPages = 512 }: ListPageCacheOptions): ListPageCache {
  const selectRevision = db
    .prepare<[string, string], number>('SELECT revision FROM collection_revisions WHERE workspace_id = ? AND collection = ?')
    .pluck();
  const revisionOf = (workspaceId: string, collection: ListedCollection) => selectRevision.get(workspaceId, collection) ?? 0;
  const pages = cache.space('list pages', { maxEntries: maxPages });

  const buildInSnapshot = db.transaction((workspaceId: string, collection: ListedCollection, build: () => unknown) => ({
    revision: revisionOf(workspaceId, collection),
    bytes: Buffer.from(JSON.stringify(build())),
  }));

  return {
    page(workspaceId, collection, query, build) {
      const key = `${workspaceId}\u0000${collection}\u0000${query}`;
      const kept = pages.get(key, revisionOf(workspaceId, collection));
      if (kept) return kept;
      const built = buildInSnapshot(workspaceId, collection, build);
      return pages.keep(key, built.revision, built.bytes);
    },
  };
}
