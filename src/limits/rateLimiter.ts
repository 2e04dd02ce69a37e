import type BetterSqlite3 from 'better-sqlite3';
import { runInImmediateTransaction } from '../store/database.js';

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix epoch seconds at which the current window ends. */
  resetAtSeconds: number;
  /** Whole seconds until the window ends, at least 1. */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  consume(bucket: string, limit: number, windowMs: number): RateLimitDecision;
  /**
   * Runs `count` in one write transaction of the counters' database: a consume and the other
   * counts of the same call (the monthly quota) commit once, together. Each count is as shared
   * and as atomic as on its own; only the number of commits changes.
   */
  countTogether<T>(count: () => T): T;
}

/**
 * Fixed windows aligned to the Unix epoch, counted in SQLite so that every server process on one
 * database shares the counters. The upsert is atomic under SQLite's write lock.
 */
export class SqliteRateLimiter implements RateLimiter {
  private readonly increment: BetterSqlite3.Statement<[string, number], { count: number }>;
  private readonly purge: BetterSqlite3.Statement<[number]>;

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly now: () => number,
  ) {
    this.increment = db.prepare(
      `INSERT INTO rate_limit_counters (bucket, window_start, count) VALUES (?, ?, 1)
       ON CONFLICT (bucket, window_start) DO UPDATE SET count = count + 1
       RETURNING count`,
    );
    this.purge = db.prepare('DELETE FROM rate_limit_counters WHERE window_start < ?');
  }

  countTogether<T>(count: () => T): T {
    // IMMEDIATE: the write lock is taken (waiting up to busy_timeout) before the first read.
    return runInImmediateTransaction(this.db, count);
  }

  consume(bucket: string, limit: number, windowMs: number): RateLimitDecision {
    const now = this.now();
    const windowStart = now - (now % windowMs);
    const windowEnd = windowStart + windowMs;
    const { count } = this.increment.get(bucket, windowStart)!;
    return {
      allowed: count <= limit,
      limit,
      remaining: Math.max(0, limit - count),
      resetAtSeconds: Math.ceil(windowEnd / 1000),
      retryAfterSeconds: Math.max(1, Math.ceil((windowEnd - now) / 1000)),
    };
  }

  /** Drops counters of windows that ended before `olderThanMs`; returns how many. */
  purgeWindowsBefore(olderThanMs: number): number {
    return this.purge.run(olderThanMs).changes;
  }
}
