// The one rule by which a process may count calls against a shared limit by itself (the rate
// limiter's buckets, the monthly quota): its last write of the count is recent, the limit is far
// off, and it holds few unwritten calls. The shared count is then written with a later call.

/** How long a process may count alone after it last wrote the shared count. */
export const LOCAL_COUNT_MS = 100;

/**
 * Whether one more call (of `units`, its x-ratelimit-cost) may be counted without writing: `counted` is the shared count as last
 * written plus this process's `unwritten` calls. Within the last tenth of the limit (at least 10
 * calls) every call is written; up to four processes may each hold a quarter of that margin.
 */
export function mayCountAlone(limit: number, counted: number, unwritten: number, units = 1): boolean {
  const margin = Math.max(10, Math.ceil(limit / 10));
  return limit - (counted + units) >= margin && unwritten + units <= Math.floor(margin / 4);
}
