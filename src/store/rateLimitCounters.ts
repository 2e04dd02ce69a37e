// Fixed-window request counters shared by every process on the database; src/limits/rateLimiter.ts
// decides what they mean. One counter per (bucket, window start), raised by an atomic upsert.
import type BetterSqlite3 from 'better-sqlite3';
import { lt, sql } from 'drizzle-orm';
import { rateLimitCounters } from '../../db/schema.js';
import { compiledStatement, drizzleFor } from './drizzle.js';

export interface RateLimitCounterStore {
  /**
   * Adds `calls` to the bucket's count in the window starting at `windowStart` and returns the new
   * count. Atomic under SQLite's write lock; on every counted request (a compiled statement).
   */
  addCalls(bucket: string, windowStart: number, calls: number): number;
  /** Drops counters of windows that started before `windowStart`; returns how many. */
  purgeWindowsBefore(windowStart: number): number;
}

export function createRateLimitCounterStore(db: BetterSqlite3.Database): RateLimitCounterStore {
  const orm = drizzleFor(db);
  const increment = compiledStatement<{ bucket: string; windowStart: number; calls: number }, [number]>(
    db,
    orm
      .insert(rateLimitCounters)
      .values({ bucket: sql.placeholder('bucket'), windowStart: sql.placeholder('windowStart'), count: sql.placeholder('calls') })
      .onConflictDoUpdate({
        target: [rateLimitCounters.bucket, rateLimitCounters.windowStart],
        set: { count: sql`${rateLimitCounters.count} + ${sql.placeholder('calls')}` },
      })
      .returning({ count: rateLimitCounters.count }),
  );
  const purge = orm
    .delete(rateLimitCounters)
    .where(lt(rateLimitCounters.windowStart, sql.placeholder('windowStart')))
    .prepare();

  return {
    addCalls(bucket, windowStart, calls) {
      return increment.value({ bucket, windowStart, calls }) as number;
    },
    purgeWindowsBefore(windowStart) {
      return purge.run({ windowStart }).changes;
    },
  };
}
