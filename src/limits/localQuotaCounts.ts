// Monthly-quota calls a process counts alone, by the rule the rate limiter uses for its buckets:
// the workspace's count was written less than 100 ms ago and is far from the quota (or uncapped).
// Only a burst that spends more than the margin within those 100 ms in other processes lets a
// process admit its few unwritten calls beyond the quota (the bound is in the spec). The calls counted here are added to the
// shared count by the next call that goes to the database, and by a job every second, so a count
// is at most about a second behind on other processes and in GET /v1/workspace/limits.
import { quotaPeriod, type QuotaDecision } from '../store/quotaCounters.js';
import { LOCAL_COUNT_MS, mayCountAlone } from './localCounting.js';

/** Workspaces whose last count this process remembers. */
const MAX_KNOWN_COUNTS = 10_000;
/** Unwritten calls of an uncapped quota held at most (a bound on what a crash can lose). */
const MAX_UNWRITTEN_UNCAPPED = 1_000;

interface KnownQuotaCount {
  workspaceId: string;
  period: string;
  resetAt: number;
  /** When this process last wrote the count. */
  writtenAt: number;
  /** The shared count when this process last wrote it. */
  used: number;
  /** Calls counted since without writing them. */
  unwritten: number;
}

/** Calls of one workspace and month still to be added to the shared count. */
export interface UnwrittenQuotaCalls {
  workspaceId: string;
  period: string;
  calls: number;
}

export class LocalQuotaCounts {
  private readonly known = new Map<string, KnownQuotaCount>();

  /** Whether the call may be counted in this process alone (see the file's header). */
  mayCountLocally(workspaceId: string, now: number, limit: number | null): boolean {
    const known = this.known.get(keyOf(workspaceId, quotaPeriod(now).period));
    if (!known || now - known.writtenAt >= LOCAL_COUNT_MS || now < known.writtenAt) return false;
    if (limit === null) return known.unwritten < MAX_UNWRITTEN_UNCAPPED;
    return mayCountAlone(limit, known.used + known.unwritten, known.unwritten);
  }

  /** Counts the call here; only after mayCountLocally said yes. */
  countLocally(workspaceId: string, now: number, limit: number | null): QuotaDecision {
    const { period, resetAt } = quotaPeriod(now);
    const known = this.known.get(keyOf(workspaceId, period))!;
    known.unwritten += 1;
    const used = known.used + known.unwritten;
    return { period, resetAt, allowed: true, used, limit, remaining: limit === null ? null : Math.max(0, limit - used) };
  }

  /** Calls counted here and not yet written for the workspace's current month: to add with the next shared count. */
  unwrittenFor(workspaceId: string, now: number): number {
    return this.known.get(keyOf(workspaceId, quotaPeriod(now).period))?.unwritten ?? 0;
  }

  /** After a shared count committed, with `earlierCalls` of this process's unwritten calls added to it. */
  written(workspaceId: string, decision: QuotaDecision, earlierCalls: number, now: number): void {
    const key = keyOf(workspaceId, decision.period);
    const known = this.known.get(key);
    const unwritten = Math.max(0, (known?.unwritten ?? 0) - earlierCalls);
    if (!known && this.known.size >= MAX_KNOWN_COUNTS) return;
    this.known.set(key, { workspaceId, period: decision.period, resetAt: decision.resetAt, writtenAt: now, used: decision.used, unwritten });
  }

  /** Every unwritten count, to be written by `flushed()`; counts of months that ended and hold nothing unwritten are forgotten. */
  unwritten(now: number): UnwrittenQuotaCalls[] {
    const pending: UnwrittenQuotaCalls[] = [];
    for (const [key, known] of this.known) {
      if (known.unwritten > 0) pending.push({ workspaceId: known.workspaceId, period: known.period, calls: known.unwritten });
      else if (now >= known.resetAt) this.known.delete(key);
    }
    return pending;
  }

  /** After `calls` were written for them: they are no longer this process's alone. */
  flushed(written: readonly UnwrittenQuotaCalls[], now: number): void {
    for (const { workspaceId, period, calls } of written) {
      const key = keyOf(workspaceId, period);
      const known = this.known.get(key);
      if (!known) continue;
      known.unwritten = Math.max(0, known.unwritten - calls);
      known.used += calls;
      if (known.unwritten === 0 && now >= known.resetAt) this.known.delete(key);
    }
  }
}

function keyOf(workspaceId: string, period: string): string {
  return `${workspaceId}\u0000${period}`;
}
