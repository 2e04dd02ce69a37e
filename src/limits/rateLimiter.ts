import type BetterSqlite3 from 'better-sqlite3';
import { isDatabaseBusy, runInImmediateTransaction, TransactionOpenElsewhereError } from '../store/database.js';
import { createRateLimitCounterStore, type RateLimitCounterStore } from '../store/rateLimitCounters.js';
import { LOCAL_COUNT_MS, mayCountAlone } from './localCounting.js';

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix epoch seconds at which the current window ends. */
  resetAtSeconds: number;
  /** Whole seconds until the window ends, at least 1. */
  retryAfterSeconds: number;
}

/** `units` in each method: what the call counts in the bucket (its operation's x-ratelimit-cost; 1 by default). */
export interface RateLimiter {
  consume(bucket: string, limit: number, windowMs: number, units?: number): RateLimitDecision;
  /**
   * Runs `count` in one write transaction of the counters' database: a consume and the other
   * counts of the same call (the monthly quota) commit once, together. Each count is as shared
   * and as atomic as on its own; only the number of commits changes.
   *
   * While another connection holds the database's write lock, `whileLocked` runs instead, at
   * once: it decides with `estimate()`, so a lock held elsewhere never turns calls into errors
   * or stalls the process.
   */
  countTogether<T>(count: () => T, whileLocked: () => T): T;
  /**
   * A decision from this process's last count of the bucket plus the calls it admitted since
   * without writing; those calls are added to the shared count by the next `consume()`.
   */
  estimate(bucket: string, limit: number, windowMs: number, units?: number): RateLimitDecision;
  /**
   * Counts the call in this process only, when that cannot admit a call the shared count would
   * refuse: the bucket is far from its limit (more than a tenth of it left), was written less than
   * 100 ms ago, and holds few unwritten calls. Undefined when the call must be counted in the
   * database (`countTogether` + `consume`), which also writes the calls counted here before it.
   */
  countLocally(bucket: string, limit: number, windowMs: number, units?: number): RateLimitDecision | undefined;
}


/** After the write lock was found taken, counts go to `estimate()` for this long before the database is tried again. */
const LOCKED_RETRY_AFTER_MS = 250;

interface KnownCount {
  windowStart: number;
  /** When this process last wrote the bucket. */
  writtenAt: number;
  /** The shared count when this process last wrote it. */
  count: number;
  /** Calls admitted since without writing them. */
  unwritten: number;
}

/**
 * Fixed windows aligned to the Unix epoch, counted in SQLite (src/store/rateLimitCounters.ts) so
 * that every server process on one database shares the counters.
 */
export class SqliteRateLimiter implements RateLimiter {
  private readonly counters: RateLimitCounterStore;
  private readonly known = new Map<string, KnownCount>();
  private lockedUntil = 0;

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly now: () => number,
  ) {
    this.counters = createRateLimitCounterStore(db);
  }

  countTogether<T>(count: () => T, whileLocked: () => T): T {
    if (this.now() < this.lockedUntil) return whileLocked();
    try {
      // IMMEDIATE: the write lock is taken (waiting up to the connection's short busy timeout) before the first read.
      return runInImmediateTransaction(this.db, count);
    } catch (error) {
      if (!isDatabaseBusy(error)) throw error;
      // This process's own open transaction ends within the turn; only another process's lock is waited out.
      if (!(error instanceof TransactionOpenElsewhereError)) this.lockedUntil = this.now() + LOCKED_RETRY_AFTER_MS;
      return whileLocked();
    }
  }

  consume(bucket: string, limit: number, windowMs: number, units = 1): RateLimitDecision {
    const now = this.now();
    const windowStart = now - (now % windowMs);
    const known = this.known.get(bucket);
    const calls = units + (known && known.windowStart === windowStart ? known.unwritten : 0);
    const count = this.counters.addCalls(bucket, windowStart, calls);
    if (known || this.known.size < MAX_KNOWN_BUCKETS) this.known.set(bucket, { windowStart, writtenAt: now, count, unwritten: 0 });
    return rateLimitDecision(count, limit, windowStart + windowMs, now);
  }

  countLocally(bucket: string, limit: number, windowMs: number, units = 1): RateLimitDecision | undefined {
    const known = this.known.get(bucket);
    if (!known) return undefined;
    const now = this.now();
    const windowStart = now - (now % windowMs);
    if (known.windowStart !== windowStart || now - known.writtenAt >= LOCAL_COUNT_MS) return undefined;
    if (!mayCountAlone(limit, known.count + known.unwritten, known.unwritten, units)) return undefined;
    const counted = known.count + known.unwritten + units;
    known.unwritten += units;
    return rateLimitDecision(counted, limit, windowStart + windowMs, now);
  }

  estimate(bucket: string, limit: number, windowMs: number, units = 1): RateLimitDecision {
    const now = this.now();
    const windowStart = now - (now % windowMs);
    let known = this.known.get(bucket);
    if (!known || known.windowStart !== windowStart) {
      known = { windowStart, writtenAt: now, count: 0, unwritten: 0 };
      if (this.known.size >= MAX_KNOWN_BUCKETS) this.known.clear();
      this.known.set(bucket, known);
    }
    known.unwritten += units;
    return rateLimitDecision(known.count + known.unwritten, limit, windowStart + windowMs, now);
  }

  /** Drops counters of windows that ended before `olderThanMs`; returns how many. */
  purgeWindowsBefore(olderThanMs: number): number {
    return this.counters.purgeWindowsBefore(olderThanMs);
  }
}

/** Buckets whose last count this process remembers (one entry per active key or workspace class). */
const MAX_KNOWN_BUCKETS = 10_000;

/** The decision for a window's `count` of calls, this one included. */
export function rateLimitDecision(count: number, limit: number, windowEnd: number, now: number): RateLimitDecision {
  return {
    allowed: count <= limit,
    limit,
    remaining: Math.max(0, limit - count),
    resetAtSeconds: Math.ceil(windowEnd / 1000),
    retryAfterSeconds: Math.max(1, Math.ceil((windowEnd - now) / 1000)),
  };
}
