// Rate-limit buckets and monthly quota counts in the store engine's database, for PostgreSQL
// without REDIS_URL: the same tables, fixed windows aligned to the epoch and UTC months as SQLite's
// limiter. Every call is counted there, each count one atomic upsert (INSERT … ON CONFLICT … DO
// UPDATE … RETURNING) in a transaction of its own (`engine.autocommit`): concurrent counts of one
// bucket from any number of instances queue on its row's lock and each reads the count it made,
// so N calls are admitted per window across every instance, exactly, and the capped quota never
// passes its limit. The quota is counted after the bucket admitted the call, as on SQLite.
//
// No counting in this process alone here (src/limits/localCounting.ts): it spares SQLite a write
// transaction per call, while a PostgreSQL count is one round trip on a pooled connection, and
// counting alone would let each instance admit a few calls beyond a limit.
//
// As SQLite's limiter does while another process holds the write lock: when the database refuses a
// count as busy (a lock or statement timeout, a serialization failure), the call is decided on this
// process's own count of the window (the last count it read plus the calls it admitted since,
// which its next count adds to the shared one) and is not counted toward the monthly quota. Any
// other error reaches the caller.
import { isDatabaseBusy } from '../store/database.js';
import type { StoreEngine } from '../store/engine.js';
import { createEngineQuotaCounterStore, type EngineQuotaCounterStore, type QuotaUsage } from '../store/quotaCounters.js';
import { createEngineRateLimitCounterStore, type EngineRateLimitCounterStore } from '../store/rateLimitCounters.js';
import { rateLimitDecision, type RateLimitDecision } from './rateLimiter.js';
import type { CallCount, CountedCall, SharedCallCounter } from './sharedCallCounter.js';

/** Buckets whose last count this process remembers for its estimates. */
const MAX_KNOWN_BUCKETS = 10_000;
/** PostgreSQL's query_canceled: a statement cut off by the statement timeout (a lock waited on too long). */
const STATEMENT_CANCELLED = '57014';

interface KnownWindow {
  windowStart: number;
  /** The shared count as last read. */
  count: number;
  /** Calls admitted on this process's estimate, not yet added to the shared count. */
  unwritten: number;
}

export class EngineLimitCounters implements SharedCallCounter {
  private readonly buckets: EngineRateLimitCounterStore;
  private readonly quota: EngineQuotaCounterStore;
  private readonly known = new Map<string, KnownWindow>();

  constructor(
    engine: StoreEngine,
    private readonly options: { now: () => number },
  ) {
    this.buckets = createEngineRateLimitCounterStore(engine);
    this.quota = createEngineQuotaCounterStore(engine);
  }

  async countCall(call: CountedCall): Promise<CallCount> {
    const now = this.options.now();
    const windowStart = now - (now % call.windowMs);
    const windowEnd = windowStart + call.windowMs;
    // Taken before the await: a call counted meanwhile does not add them a second time.
    const known = this.known.get(call.bucket);
    const earlierCalls = known?.windowStart === windowStart ? known.unwritten : 0;
    if (earlierCalls > 0) known!.unwritten = 0;
    const units = call.units ?? 1;
    let count: number;
    try {
      count = await this.buckets.addCalls(call.bucket, windowStart, units + earlierCalls);
    } catch (error) {
      if (!isBusy(error)) throw error;
      return { decision: this.estimate(call, windowStart, now, earlierCalls + units) };
    }
    this.remember(call.bucket, windowStart, count);
    const decision = rateLimitDecision(count, call.limit, windowEnd, now);
    // A call refused by the rate limit does not count against the quota.
    if (!decision.allowed || !call.quota) return { decision };
    try {
      return { decision, quota: await this.quota.countQuotaCall(call.quota.workspaceId, now, call.quota.limit) };
    } catch (error) {
      if (!isBusy(error)) throw error;
      return { decision };
    }
  }

  quotaUsage(workspaceId: string, now: number): Promise<QuotaUsage> {
    return this.quota.quotaUsage(workspaceId, now);
  }

  /** Drops counters of windows that started before `olderThanMs`; returns how many. */
  purgeWindowsBefore(olderThanMs: number): Promise<number> {
    return this.buckets.purgeWindowsBefore(olderThanMs);
  }

  /** The window's last count read here plus the calls admitted on estimates since, `calls` (this one included) added. */
  private estimate(call: CountedCall, windowStart: number, now: number, calls: number): RateLimitDecision {
    let known = this.known.get(call.bucket);
    if (!known || known.windowStart < windowStart) {
      known = { windowStart, count: 0, unwritten: 0 };
      this.keep(call.bucket, known);
    }
    // A later window is known already (this call's clock is behind): this one is as good as over.
    if (known.windowStart > windowStart) return rateLimitDecision(calls, call.limit, windowStart + call.windowMs, now);
    known.unwritten += calls;
    return rateLimitDecision(known.count + known.unwritten, call.limit, windowStart + call.windowMs, now);
  }

  private remember(bucket: string, windowStart: number, count: number): void {
    const known = this.known.get(bucket);
    if (!known || known.windowStart < windowStart) this.keep(bucket, { windowStart, count, unwritten: 0 });
    // Counts of one window answer out of order: the highest is the latest.
    else if (known.windowStart === windowStart) known.count = Math.max(known.count, count);
  }

  private keep(bucket: string, known: KnownWindow): void {
    if (!this.known.has(bucket) && this.known.size >= MAX_KNOWN_BUCKETS) {
      // Forget what holds nothing still to be written.
      for (const [oldBucket, old] of this.known) if (old.unwritten === 0) this.known.delete(oldBucket);
      if (this.known.size >= MAX_KNOWN_BUCKETS) return;
    }
    this.known.set(bucket, known);
  }
}

function isBusy(error: unknown): boolean {
  return isDatabaseBusy(error) || (error as { code?: unknown } | null)?.code === STATEMENT_CANCELLED;
}
