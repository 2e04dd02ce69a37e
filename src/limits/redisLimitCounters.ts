// Rate-limit buckets and monthly quota counts in Redis (REDIS_URL), the same fixed windows aligned
// to the epoch and the same UTC months as in SQLite. One Lua script counts a call's bucket and, when
// the bucket admits it, its quota: one atomic round trip, so N calls are admitted per window across
// every process, exactly (with a lease, below: never more than N). Each key expires on its own once
// its window or month is over (no purge).
//
// No counting in this process alone here (src/limits/localCounting.ts): it exists to spare SQLite a
// write transaction per call. What spares the round trip here is a lease: a bucket whose limit is
// 2,000 units a window or more takes LEASE_FRACTION of its limit (a thousandth) at once from Redis,
// one INCRBY counted like calls, and admits its calls from it in this process until it is used up.
// The units of a lease are counted before they are used, so no bucket ever admits more than its
// limit across every process; what leasing costs is that a lease not used up when its window ends
// was counted for nothing: each process holds at most a thousandth of the limit so, and the bucket
// may refuse (and X-RateLimit-Remaining show) up to that much per process too early. Exact, one round
// trip per call as before: the ai class (`exact`), a limit under 2,000, and any call counted against
// a capped monthly quota. An uncapped quota's calls admitted from a lease are counted here and
// added to Redis by the job that writes unwritten quota calls every second.
//
// When Redis cannot be reached (an error, or no answer within REDIS_COMMAND_TIMEOUT_MS) both limits
// fail open on this process's own estimate: the last count it read plus the calls it admitted
// since. A workspace whose quota was known to be spent stays refused. The quota calls admitted
// while there was no connection are added to the shared count once Redis answers again; a call
// whose count was sent and not answered may still have been counted (a Redis that hung and
// resumed runs it), so it is never added a second time.
import type { Redis } from 'ioredis';
import { quotaPeriod, type QuotaDecision, type QuotaUsage } from '../store/quotaCounters.js';
import { rateLimitDecision } from './rateLimiter.js';
import type { RedisConnection } from './redisConnection.js';
import type { CallCount, CountedCall, SharedCallCounter } from './sharedCallCounter.js';

/**
 * KEYS[1] the bucket's window, KEYS[2] (optional) the workspace's month.
 * ARGV: the rate limit, ms the window key lives, the call's units (x-ratelimit-cost), the quota (-1: uncapped), ms the month key lives.
 * Returns {window count} or {window count, month count, 1 when this call was counted in the month}.
 * A call the bucket refuses is counted in the bucket, never in the month (as in SQLite).
 */
const COUNT_CALL_SCRIPT = `
local units = tonumber(ARGV[3])
local count = redis.call('INCRBY', KEYS[1], units)
if count == units then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if #KEYS < 2 or count > tonumber(ARGV[1]) then return {count} end
local quota = tonumber(ARGV[4])
local used = tonumber(redis.call('GET', KEYS[2]) or '0')
if quota >= 0 and used >= quota then return {count, used, 0} end
used = redis.call('INCR', KEYS[2])
if used == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[5]) end
return {count, used, 1}
`;

/** KEYS[1] a workspace's month; ARGV: calls admitted already, ms the key lives when it has no expiry yet. */
const ADD_QUOTA_CALLS_SCRIPT = `
local used = redis.call('INCRBY', KEYS[1], ARGV[1])
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return used
`;

/** A month's key outlives the month by a day: readers with a clock a little behind still find it. */
const MONTH_KEY_GRACE_MS = 24 * 60 * 60 * 1000;
/** Buckets and workspaces whose last count this process remembers for its estimates. */
const MAX_KNOWN = 10_000;
/** A lease's share of its bucket's limit: what one process may hold counted and unused. */
export const LEASE_FRACTION = 0.001;
/** A lease of fewer units than this is not taken: the call is counted in Redis alone. */
const MIN_LEASE_UNITS = 2;

/** The units of a lease for `limit`, or 0 when the bucket is counted call by call. */
export function leaseUnits(limit: number): number {
  const units = Math.floor(limit * LEASE_FRACTION);
  return units >= MIN_LEASE_UNITS ? units : 0;
}

/** Units of a bucket's window counted in Redis ahead of use by this process. */
interface Lease {
  windowStart: number;
  /** Units of the lease not used yet. */
  left: number;
  /** The bucket's shared count as Redis answered the lease (this lease included). */
  sharedCount: number;
}

type ScriptCommand = (numberOfKeys: number, ...keysAndArguments: (string | number)[]) => Promise<unknown>;

interface KnownWindow {
  windowStart: number;
  /** The shared count as last read. */
  count: number;
  /** Calls admitted since on this process's estimate. */
  unwritten: number;
}

interface KnownMonth {
  workspaceId: string;
  period: string;
  resetAt: number;
  /** The shared count as last read. */
  used: number;
  /** Calls admitted on this process's estimate, not yet added to the shared count. */
  unwritten: number;
  /** Calls admitted on the estimate after their count was sent and not answered: perhaps counted, never added. */
  unanswered: number;
}

export class RedisLimitCounters implements SharedCallCounter {
  private readonly countCallScript: ScriptCommand;
  private readonly addQuotaCallsScript: ScriptCommand;
  private readonly knownWindows = new Map<string, KnownWindow>();
  private readonly knownMonths = new Map<string, KnownMonth>();
  private readonly leases = new Map<string, Lease>();
  /** A lease on its way per bucket: calls meanwhile wait for it rather than take one each. */
  private readonly leasing = new Map<string, Promise<void>>();

  constructor(
    private readonly connection: RedisConnection,
    private readonly options: { keyPrefix: string; now: () => number },
  ) {
    const redis: Redis = connection.redis;
    // EVALSHA, and EVAL once when Redis does not know the script yet (after a restart).
    redis.defineCommand('limitsCountCall', { lua: COUNT_CALL_SCRIPT });
    redis.defineCommand('limitsAddQuotaCalls', { lua: ADD_QUOTA_CALLS_SCRIPT });
    const commands = redis as unknown as Record<string, ScriptCommand>;
    const countCall = commands.limitsCountCall!.bind(redis);
    const addQuotaCalls = commands.limitsAddQuotaCalls!.bind(redis);
    this.countCallScript = (...args) => connection.answer(countCall(...args));
    this.addQuotaCallsScript = (...args) => connection.answer(addQuotaCalls(...args));
  }

  async countCall(call: CountedCall): Promise<CallCount> {
    const units = leaseUnits(call.limit);
    if (units > 0 && !call.exact && (!call.quota || call.quota.limit === null) && (call.units ?? 1) <= units && this.connection.usable()) {
      const leased = await this.countFromLease(call, units);
      if (leased) return leased;
    }
    return this.countInRedis(call);
  }

  /** The call admitted from this process's lease of its window (taken first when there is none left); undefined: count it in Redis. */
  private async countFromLease(call: CountedCall, leaseSize: number): Promise<CallCount | undefined> {
    // Each turn admits the call, waits for a lease another call is taking, or takes one and ends.
    for (;;) {
      const now = this.options.now();
      const windowStart = now - (now % call.windowMs);
      const units = call.units ?? 1;
      const lease = this.leases.get(call.bucket);
      if (lease && lease.windowStart === windowStart && lease.left >= units) {
        lease.left -= units;
        const decision = rateLimitDecision(lease.sharedCount - lease.left, call.limit, windowStart + call.windowMs, now);
        return { decision, ...(call.quota ? { quota: this.countUncappedQuotaHere(call.quota.workspaceId, now) } : {}) };
      }
      const pending = this.leasing.get(call.bucket);
      if (pending) {
        await pending;
        continue;
      }
      if (!this.connection.usable()) return undefined;
      const taking = this.takeLease(call, windowStart, leaseSize);
      this.leasing.set(call.bucket, taking.then(() => undefined));
      let spentAt: number | undefined;
      try {
        spentAt = await taking;
      } finally {
        this.leasing.delete(call.bucket);
      }
      // A spent bucket: the lease counted there like a refused call, and this call is refused.
      if (spentAt !== undefined) return { decision: rateLimitDecision(spentAt, call.limit, windowStart + call.windowMs, this.options.now()) };
      if (!this.leases.has(call.bucket)) return undefined;
    }
  }

  /**
   * Counts `size` units of the window in Redis for this process. Of a lease that passes the limit
   * only the units within it are this process's; none when the bucket is spent: then resolves to
   * the bucket's count. Nothing on an error: the call is counted as without a lease.
   */
  private async takeLease(call: CountedCall, windowStart: number, size: number): Promise<number | undefined> {
    this.leases.delete(call.bucket);
    try {
      const now = this.options.now();
      const windowEnd = windowStart + call.windowMs;
      const reply = (await this.countCallScript(1, this.windowKey(call, windowStart), call.limit, windowEnd - now + call.windowMs, size)) as number[];
      this.connection.answered();
      const count = reply[0]!;
      this.remember(this.knownWindows, call.bucket, { windowStart, count, unwritten: 0 });
      const within = Math.min(size, call.limit - (count - size));
      if (within < (call.units ?? 1)) return count;
      this.leases.set(call.bucket, { windowStart, left: within, sharedCount: count - size + within });
    } catch (error) {
      this.connection.failed(error);
    }
    return undefined;
  }

  /** What this process knows of a workspace's month, remembered from its first call. */
  private knownMonth(workspaceId: string, month: ReturnType<typeof quotaPeriod>) {
    const key = monthOf(workspaceId, month.period);
    let known = this.knownMonths.get(key);
    if (!known) {
      known = { workspaceId, ...month, used: 0, unwritten: 0, unanswered: 0 };
      this.remember(this.knownMonths, key, known);
    }
    return known;
  }

  /** An uncapped quota's call admitted from a lease: counted here, written by writeUnwrittenQuotaCalls. */
  private countUncappedQuotaHere(workspaceId: string, now: number): QuotaDecision {
    const month = quotaPeriod(now);
    const known = this.knownMonth(workspaceId, month);
    known.unwritten += 1;
    return { ...month, allowed: true, used: known.used + known.unwritten, limit: null, remaining: null };
  }

  private windowKey(call: CountedCall, windowStart: number): string {
    return `${this.options.keyPrefix}{${call.owner}}:rate:${call.bucket}:${windowStart}`;
  }

  private async countInRedis(call: CountedCall): Promise<CallCount> {
    const now = this.options.now();
    const windowStart = now - (now % call.windowMs);
    const windowEnd = windowStart + call.windowMs;
    let sent = false;
    if (this.connection.usable()) {
      try {
        sent = true;
        const windowKey = this.windowKey(call, windowStart);
        // The window's key outlives it by a window: a process whose clock is behind still counts in it.
        const windowTtl = windowEnd - now + call.windowMs;
        let reply: number[];
        let month: { period: string; resetAt: number } | undefined;
        if (call.quota) {
          month = quotaPeriod(now);
          reply = (await this.countCallScript(2, windowKey, this.monthKey(call.quota.workspaceId, month.period),
            call.limit, windowTtl, call.units ?? 1, call.quota.limit ?? -1, month.resetAt - now + MONTH_KEY_GRACE_MS)) as number[];
        } else {
          reply = (await this.countCallScript(1, windowKey, call.limit, windowTtl, call.units ?? 1)) as number[];
        }
        this.connection.answered();
        const count = reply[0]!;
        this.remember(this.knownWindows, call.bucket, { windowStart, count, unwritten: 0 });
        const decision = rateLimitDecision(count, call.limit, windowEnd, now);
        if (!call.quota || !month || reply.length < 3) return { decision };
        return { decision, quota: this.readQuota(call.quota.workspaceId, call.quota.limit, month, reply[1]!, reply[2] === 1) };
      } catch (error) {
        this.connection.failed(error);
      }
    }
    return this.estimate(call, now, windowStart, sent);
  }

  async quotaUsage(workspaceId: string, now: number): Promise<QuotaUsage> {
    const month = quotaPeriod(now);
    const known = this.knownMonths.get(monthOf(workspaceId, month.period));
    const unwritten = known?.unwritten ?? 0;
    if (this.connection.usable()) {
      try {
        const used = Number((await this.connection.answer(this.connection.redis.get(this.monthKey(workspaceId, month.period)))) ?? 0);
        this.connection.answered();
        return { ...month, used: used + unwritten };
      } catch (error) {
        this.connection.failed(error);
      }
    }
    return { ...month, used: (known?.used ?? 0) + unwritten + (known?.unanswered ?? 0) };
  }

  /**
   * Adds the quota calls admitted on this process's estimate to the shared counts (a job every
   * second, and at shutdown); returns how many. Nothing while Redis cannot be reached.
   */
  async writeUnwrittenQuotaCalls(): Promise<number> {
    let written = 0;
    const now = this.options.now();
    for (const [key, known] of this.knownMonths) {
      if (known.unwritten === 0) {
        if (now >= known.resetAt) this.knownMonths.delete(key);
        continue;
      }
      if (!this.connection.usable()) break;
      // Taken before the await: a run at the same time (the job and the shutdown) finds nothing to add twice.
      const calls = known.unwritten;
      known.unwritten = 0;
      try {
        const ttl = Math.max(known.resetAt - now, 0) + MONTH_KEY_GRACE_MS;
        // The shared count with these calls; calls admitted during the await are in `unwritten` again.
        known.used = (await this.addQuotaCallsScript(1, this.monthKey(known.workspaceId, known.period), calls, ttl)) as number;
        this.connection.answered();
        written += calls;
      } catch (error) {
        known.unwritten += calls;
        this.connection.failed(error);
        break;
      }
    }
    return written;
  }

  /** Quota calls admitted on this process's estimate and not yet in the shared count. */
  unwrittenQuotaCalls(): number {
    let calls = 0;
    for (const known of this.knownMonths.values()) calls += known.unwritten;
    return calls;
  }

  private monthKey(workspaceId: string, period: string): string {
    return `${this.options.keyPrefix}{${workspaceId}}:quota:${period}`;
  }

  private readQuota(workspaceId: string, limit: number | null, month: { period: string; resetAt: number }, used: number, counted: boolean): QuotaDecision {
    const key = monthOf(workspaceId, month.period);
    const known = this.knownMonths.get(key);
    if (known) {
      known.used = used;
      known.unanswered = 0;
    } else {
      this.remember(this.knownMonths, key, { workspaceId, ...month, used, unwritten: 0, unanswered: 0 });
    }
    const withUnwritten = used + (known?.unwritten ?? 0);
    if (!counted) return { ...month, allowed: false, used: withUnwritten, limit, remaining: 0 };
    return { ...month, allowed: true, used: withUnwritten, limit, remaining: limit === null ? null : Math.max(0, limit - withUnwritten) };
  }

  /** The decision without Redis: the last count read in this window plus the calls admitted since. */
  private estimate(call: CountedCall, now: number, windowStart: number, sent: boolean): CallCount {
    let window = this.knownWindows.get(call.bucket);
    if (!window || window.windowStart !== windowStart) {
      window = { windowStart, count: 0, unwritten: 0 };
      this.remember(this.knownWindows, call.bucket, window);
    }
    window.unwritten += call.units ?? 1;
    const decision = rateLimitDecision(window.count + window.unwritten, call.limit, windowStart + call.windowMs, now);
    if (!decision.allowed || !call.quota) return { decision };
    const { workspaceId, limit } = call.quota;
    const month = quotaPeriod(now);
    const known = this.knownMonth(workspaceId, month);
    const counted = known.used + known.unwritten + known.unanswered;
    if (limit !== null && counted >= limit) return { decision, quota: { ...month, allowed: false, used: counted, limit, remaining: 0 } };
    if (sent) known.unanswered += 1;
    else known.unwritten += 1;
    return { decision, quota: { ...month, allowed: true, used: counted + 1, limit, remaining: limit === null ? null : Math.max(0, limit - counted - 1) } };
  }

  private remember<T extends { unwritten: number }>(map: Map<string, T>, key: string, value: T): void {
    const known = map.get(key);
    if (known) {
      Object.assign(known, value);
      return;
    }
    if (map.size >= MAX_KNOWN) {
      // Forget what holds nothing still to be written.
      for (const [oldKey, old] of map) if (old.unwritten === 0) map.delete(oldKey);
      if (map.size >= MAX_KNOWN) return;
    }
    map.set(key, value);
  }
}

function monthOf(workspaceId: string, period: string): string {
  return `${workspaceId}\u0000${period}`;
}
