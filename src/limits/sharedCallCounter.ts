import type { QuotaDecision, QuotaUsage } from '../store/quotaCounters.js';
import type { RateLimitDecision } from './rateLimiter.js';

/** One call to count: a rate-limit bucket's window and, for token calls of a workspace, its monthly quota. */
export interface CountedCall {
  /** What the bucket belongs to (a workspace, an API key): its counts share one Redis Cluster slot. */
  owner: string;
  bucket: string;
  limit: number;
  windowMs: number;
  /** Units the call counts in the bucket: its operation's x-ratelimit-cost (default 1). The quota counts calls, 1 each. */
  units?: number;
  /** Counted in the shared store call by call, never from a lease taken ahead (the ai class). */
  exact?: boolean;
  /** Counted only when the rate limit admits the call; `limit` null counts without a cap. */
  quota?: { workspaceId: string; limit: number | null };
}

export interface CallCount {
  decision: RateLimitDecision;
  /** Present when the call carried a quota and the rate limit admitted it. */
  quota?: QuotaDecision;
}

/**
 * Rate-limit buckets and monthly quota counts kept outside the process, shared exactly by every
 * server process: in Redis (each call one atomic step, or taken from a lease counted ahead, never beyond the limit: src/limits/redisLimitCounters.ts) or in PostgreSQL's tables (each count one
 * atomic statement). When the shared count cannot be had (Redis unreachable, the database busy),
 * the call is decided on this process's own estimate; Redis never rejects, the database rejects
 * on its other errors as SQLite's limiter does.
 */
export interface SharedCallCounter {
  countCall(call: CountedCall): Promise<CallCount>;
  /** Calls counted in the workspace's month containing `now`, this process's calls not yet shared included. */
  quotaUsage(workspaceId: string, now: number): Promise<QuotaUsage>;
}
