// Rows a PostgreSQL server keeps in memory so that a request need not read them again: a
// credential and the caller it names, a portfolio's revision, a listed collection's revision. The
// database announces every committed change to their tables on one channel (migration
// 0005_cached_row_notices: a trigger per table, so whatever code or process writes, it is
// announced), and a change drops every kept row of its table on every listening process at once.
// Collections are written on every change of a versioned resource, and a NOTIFY inside a
// transaction serializes the commits of the whole cluster, so their writes are announced by the
// engine instead, after the commit (src/store/engine.ts, `collectionRowsNotice`), and to the
// writing process's own listeners before its write resolves: a client sees its own change on its
// next request to the same instance. A write that no engine made (SQL by hand) shows within the bound.
//
// The bound: a kept row is served at most CACHED_ROW_MAX_AGE_MS (1 s) after it was read, so a
// change is seen by every instance within about a second even when its announcement is lost (a
// crash between the commit and the delivery); in practice within the delivery of the NOTIFY, a few
// milliseconds. While the listening connection is down nothing is kept or served from memory: every
// request reads the database, as without a cache, until the connection is back (which drops
// everything kept before). A read that started before a change and ends after its announcement
// is not kept.
// On SQLite there is no announcement: the engine's change stamp of the tables stands for it (this
// connection's own writes to each table, counted by temporary triggers at once; PRAGMA data_version
// for other connections' and processes' commits, read once per turn of the event loop). A write of
// this server drops only the kept rows of the tables it wrote (a new task keeps the credentials);
// any commit of another process drops every kept row, so a revocation by the admin CLI or another
// server on the same file shows from this server's next turn of the event loop.
import type { StoreEngine } from './engine.js';
import { listedCollections } from './revisionTriggers.js';

/** The channel of migration 0005's triggers. */
const cachedRowsChannel = 'cached_rows_changed';
/** Triggers the start-up check requires on PostgreSQL (src/store/postgres.ts). */
export const cachedRowNoticeTriggers = ['api_keys', 'personal_access_tokens', 'users', 'workspaces', 'portfolios'].map((table) => `${table}_announce_change`);

/** How long a kept row is served at most after it was read. */
export const CACHED_ROW_MAX_AGE_MS = 1_000;

export type CachedTable = 'api_keys' | 'personal_access_tokens' | 'users' | 'workspaces' | 'portfolios' | 'collection_revisions';

/** What the PostgreSQL engine announces on every committed write to a listed collection. */
export const collectionRowsNotice = { tables: listedCollections, channel: cachedRowsChannel, payload: 'collection_revisions' } as const;

export interface CachedRowChanges {
  /** Whether rows may be kept and served now: the listening connection is up. */
  live(): boolean;
  /** Raised by every change announced on one of `tables`, and by every loss or return of the connection. */
  generation(tables: readonly CachedTable[]): number;
  stop(): Promise<void>;
}

/** Listens for the announcements on PostgreSQL; on SQLite a feed that is never live. */
export async function listenForCachedRowChanges(engine: StoreEngine): Promise<CachedRowChanges> {
  const generations = new Map<string, number>();
  let everything = 0;
  let live = false;
  const changed = (table: string) => {
    if (table === '') everything += 1;
    else generations.set(table, (generations.get(table) ?? 0) + 1);
  };
  if (engine.kind !== 'postgres') return changesOfStamp(engine.changeStamp);
  let lostMeanwhile = false;
  const stop = await engine.listen(
    cachedRowsChannel,
    (table) => {
      // Any announcement comes over a connection that is up; an empty one is the connection made again.
      if (table === '') live = true;
      changed(table);
    },
    () => {
      lostMeanwhile = true;
      live = false;
      changed('');
    },
  );
  if (!lostMeanwhile) live = true;
  return {
    live: () => live,
    generation: (tables) => tables.reduce((sum, table) => sum + (generations.get(table) ?? 0), everything),
    stop,
  };
}

/** SQLite: the change stamp of the tables asked for is their generation; never live without a stamp. */
export function changesOfStamp(changeStamp: StoreEngine['changeStamp']): CachedRowChanges {
  if (!changeStamp) return { live: () => false, generation: () => 0, stop: async () => undefined };
  return { live: () => true, generation: (tables) => changeStamp(tables), stop: async () => undefined };
}

export interface CachedRows<Value> {
  /** The kept value of `key`, or `read()`'s (kept when it is not undefined and no change was announced during the read). */
  get(key: string, read: () => Promise<Value | undefined>): Promise<Value | undefined>;
}

/**
 * Values read from `tables`, kept per key while no change of those tables was announced and for at
 * most CACHED_ROW_MAX_AGE_MS; at most `maxEntries` (the oldest dropped first).
 */
export function createCachedRows<Value>(
  changes: CachedRowChanges,
  tables: readonly CachedTable[],
  options: { now: () => number; maxEntries: number },
): CachedRows<Value> {
  const kept = new Map<string, { value: Value; generation: number; readAt: number }>();
  return {
    async get(key, read) {
      if (!changes.live()) return read();
      const generation = changes.generation(tables);
      const now = options.now();
      const entry = kept.get(key);
      if (entry && entry.generation === generation && now - entry.readAt < CACHED_ROW_MAX_AGE_MS && now >= entry.readAt) return entry.value;
      const value = await read();
      if (value === undefined || !changes.live() || changes.generation(tables) !== generation) return value;
      kept.delete(key);
      if (kept.size >= options.maxEntries) kept.delete(kept.keys().next().value!);
      kept.set(key, { value, generation, readAt: now });
      return value;
    },
  };
}
