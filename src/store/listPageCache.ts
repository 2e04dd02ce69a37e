// Encoded list pages kept per process and served again while the listed collection is unchanged.
// Triggers raise `collection_revisions` in the transaction of every write to tasks or projects
// (migration 0004), so one indexed read per request tells whether a kept page still holds,
// whichever process or code path wrote. A page is built and its revision read in one snapshot.
import type BetterSqlite3 from 'better-sqlite3';

export type ListedCollection = 'tasks' | 'projects';

export interface ListPageCacheOptions {
  /** Most pages kept across all workspaces (least recently used dropped first). */
  maxPages?: number;
  /** Most bytes kept across all pages. */
  maxBytes?: number;
}

export interface ListPageCache {
  /**
   * The encoded page for `query` (a key naming every parameter that shapes the page): the kept
   * bytes while the collection's revision is the one they were built at, else `build()`'s answer,
   * built in one read snapshot with the revision and kept. `build` throws to refuse the request.
   */
  page(workspaceId: string, collection: ListedCollection, query: string, build: () => unknown): Buffer;
}

interface KeptPage {
  revision: number;
  bytes: Buffer;
}

export function createListPageCache(db: BetterSqlite3.Database, options: ListPageCacheOptions = {}): ListPageCache {
  const maxPages = options.maxPages ?? 512;
  const maxBytes = options.maxBytes ?? 16 * 1024 * 1024;
  const selectRevision = db
    .prepare<[string, string], number>('SELECT revision FROM collection_revisions WHERE workspace_id = ? AND collection = ?')
    .pluck();
  const revisionOf = (workspaceId: string, collection: ListedCollection) => selectRevision.get(workspaceId, collection) ?? 0;
  const kept = new Map<string, KeptPage>();
  let keptBytes = 0;

  const forget = (key: string, page: KeptPage) => {
    kept.delete(key);
    keptBytes -= page.bytes.length;
  };

  const buildInSnapshot = db.transaction((workspaceId: string, collection: ListedCollection, build: () => unknown) => ({
    revision: revisionOf(workspaceId, collection),
    bytes: Buffer.from(JSON.stringify(build())),
  }));

  return {
    page(workspaceId, collection, query, build) {
      const key = `${workspaceId}\u0000${collection}\u0000${query}`;
      const existing = kept.get(key);
      if (existing) {
        forget(key, existing);
        if (existing.revision === revisionOf(workspaceId, collection)) {
          kept.set(key, existing);
          keptBytes += existing.bytes.length;
          return existing.bytes;
        }
      }
      const built: KeptPage = buildInSnapshot(workspaceId, collection, build);
      if (maxPages === 0 || built.bytes.length > maxBytes) return built.bytes;
      kept.set(key, built);
      keptBytes += built.bytes.length;
      for (const [oldestKey, oldest] of kept) {
        if (kept.size <= maxPages && keptBytes <= maxBytes) break;
        forget(oldestKey, oldest);
      }
      return built.bytes;
    },
  };
}
