// Limits per client address, for what answers before any credential is known (the OAuth
// authorization server's pages and its token endpoint). Counted where the API's limits are
// counted, so that every server process on one database or one Redis shares them: in Redis
// (REDIS_URL), in PostgreSQL's counter table, or in SQLite's, with SQLite's local counting while a
// bucket is far from its limit.
//
// A bucket found spent is refused without counting for the rest of its window: a flood past the
// limit costs no write (on SQLite, no write lock) and no round trip.
import type { RateLimitDecision, RateLimiter } from './rateLimiter.js';
import { rateLimitDecision } from './rateLimiter.js';
import type { SharedCallCounter } from './sharedCallCounter.js';

export interface AddressLimit {
  /** Names the bucket: `<name>:<address>`. */
  name: string;
  /** Requests per window; 0: no limit. */
  limit: number;
  windowMs: number;
}

export interface AddressRateLimiter {
  /** Counts one request of `address` against `limit`; the decision says whether it is admitted. */
  admit(limit: AddressLimit, address: string): Promise<RateLimitDecision>;
}

/** Spent buckets this process remembers; beyond them, the oldest is forgotten (and counted again). */
const MAX_SPENT_BUCKETS = 10_000;

export function createAddressRateLimiter(deps: {
  callCounter: SharedCallCounter | undefined;
  rateLimiter: RateLimiter | undefined;
  now: () => number;
}): AddressRateLimiter {
  /** Bucket ─► the end of the window in which it was found spent. */
  const spent = new Map<string, number>();

  /** `owner`: the address, whose buckets share one Redis Cluster slot. */
  const count = async (bucket: string, owner: string, limit: number, windowMs: number): Promise<RateLimitDecision> => {
    if (deps.callCounter) return (await deps.callCounter.countCall({ owner, bucket, limit, windowMs })).decision;
    const { rateLimiter } = deps;
    if (!rateLimiter) throw new Error('the address rate limiter was built with neither a call counter nor a rate limiter');
    return (
      rateLimiter.countLocally(bucket, limit, windowMs) ??
      rateLimiter.countTogether(
        () => rateLimiter.consume(bucket, limit, windowMs),
        () => rateLimiter.estimate(bucket, limit, windowMs),
      )
    );
  };

  return {
    async admit({ name, limit, windowMs }, address) {
      const now = deps.now();
      const windowEnd = now - (now % windowMs) + windowMs;
      if (limit <= 0) return rateLimitDecision(0, Number.MAX_SAFE_INTEGER, windowEnd, now);
      const bucket = `${name}:${address}`;
      const spentUntil = spent.get(bucket);
      if (spentUntil !== undefined) {
        if (now < spentUntil) return rateLimitDecision(limit + 1, limit, spentUntil, now);
        spent.delete(bucket);
      }
      const decision = await count(bucket, address, limit, windowMs);
      if (!decision.allowed) {
        if (spent.size >= MAX_SPENT_BUCKETS) spent.delete(spent.keys().next().value!);
        spent.set(bucket, decision.resetAtSeconds * 1000);
      }
      return decision;
    },
  };
}
