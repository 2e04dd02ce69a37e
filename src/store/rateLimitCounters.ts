// Fixed-window request counters shared by every process on the database; src/limits/rateLimiter.ts
// (SQLite) and src/limits/engineLimitCounters.ts (PostgreSQL) decide what they mean. One counter
// per (bucket, window start), raised by an atomic upsert. The statements are written once; SQLite's
// admission path runs them synchronously on the connection, any engine runs them asynchronously.
import type BetterSqlite3 from 'better-sqlite3';
import { lt, sql } from 'drizzle-orm';
import { rateLimitCounters } from '../../db/schema.js';
import { compiledStatement, drizzleFor, type AppDatabase } from './drizzle.js';
import { engineOf, type StoreSource } from './engine.js';

export interface RateLimitCounterStore {
  /**
   * Adds `calls` to the bucket's count in the window starting at `windowStart` and returns the new
   * count. Atomic under SQLite's write lock; on every counted request (a compiled statement).
   */
  addCalls(bucket: string, windowStart: number, calls: number): number;
  /** Drops counters of windows that started before `windowStart`; returns how many. */
  purgeWindowsBefore(windowStart: number): number;
}

/** RateLimitCounterStore on a store engine: each call one atomic statement (see `engine.autocommit`). */
export interface EngineRateLimitCounterStore {
  addCalls(bucket: string, windowStart: number, calls: number): Promise<number>;
  purgeWindowsBefore(windowStart: number): Promise<number>;
}

type AddCallsArgs = { bucket: string; windowStart: number; calls: number };

function rateLimitCounterQueries(orm: AppDatabase) {
  return {
    addCalls: orm
      .insert(rateLimitCounters)
      .values({ bucket: sql.placeholder('bucket'), windowStart: sql.placeholder('windowStart'), count: sql.placeholder('calls') })
      .onConflictDoUpdate({
        target: [rateLimitCounters.bucket, rateLimitCounters.windowStart],
        set: { count: sql`${rateLimitCounters.count} + ${sql.placeholder('calls')}` },
      })
      .returning({ count: rateLimitCounters.count }),
    purge: orm.delete(rateLimitCounters).where(lt(rateLimitCounters.windowStart, sql.placeholder('windowStart'))),
  };
}

export function createRateLimitCounterStore(db: BetterSqlite3.Database): RateLimitCounterStore {
  const queries = rateLimitCounterQueries(drizzleFor(db));
  const increment = compiledStatement<AddCallsArgs, [number]>(db, queries.addCalls);
  const purge = compiledStatement<{ windowStart: number }>(db, queries.purge);

  return {
    addCalls(bucket, windowStart, calls) {
      return increment.value({ bucket, windowStart, calls }) as number;
    },
    purgeWindowsBefore(windowStart) {
      return purge.run({ windowStart }).changes;
    },
  };
}

export function createEngineRateLimitCounterStore(source: StoreSource): EngineRateLimitCounterStore {
  const engine = engineOf(source);
  const queries = rateLimitCounterQueries(engine.orm);
  const increment = engine.statement<unknown, AddCallsArgs>(queries.addCalls);
  const purge = engine.statement<unknown, { windowStart: number }>(queries.purge);

  return {
    addCalls: (bucket, windowStart, calls) => engine.autocommit(async () => (await increment.value({ bucket, windowStart, calls })) as number),
    purgeWindowsBefore: (windowStart) => engine.autocommit(() => purge.run({ windowStart })),
  };
}
