/**
 * When a failed delivery is tried again, as the contract's "Webhooks" section says: after each
 * delay of the workspace's schedule in turn (30 s, 2 min, 10 min, 30 min, 2 h, 8 h, 24 h by
 * default), each lengthened by a random jitter of up to 10 %; a `Retry-After` on a 429 or 503
 * postpones the next attempt to that time when it is later, but never beyond the schedule's last
 * delay. Pure functions: the caller brings the clock and the random number.
 */

/** Largest jitter, as a fraction of the delay. */
export const RETRY_JITTER_FRACTION = 0.1;

/** Statuses whose `Retry-After` is honoured. */
const RETRY_AFTER_STATUSES = new Set([429, 503]);

/**
 * Milliseconds from `nowMs` that a `Retry-After` value asks for: delay-seconds (`120`) or an
 * HTTP date. Undefined when the value is missing or unreadable; 0 for a date in the past.
 */
export function parseRetryAfter(value: string | undefined | null, nowMs: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  const text = value.trim();
  if (/^[0-9]+$/.test(text)) return Math.min(Number(text), Number.MAX_SAFE_INTEGER / 1000) * 1000;
  // An HTTP date (IMF-fixdate, or the obsolete RFC 850 and asctime forms): all name a weekday and a month.
  if (!/[A-Za-z]{3}/.test(text)) return undefined;
  // asctime carries no zone; HTTP dates are always GMT.
  const at = Date.parse(/GMT|UTC|[+-]\d{4}$/.test(text) ? text : `${text} GMT`);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

export interface NextAttemptInput {
  /** The workspace's schedule in force: seconds before each retry, in order. */
  delaysSeconds: readonly number[];
  /** The number (1-based) of the attempt that just failed. */
  failedAttemptNumber: number;
  /** When it failed, milliseconds since the epoch. */
  nowMs: number;
  /** A random number in [0, 1): the share of the largest jitter to add. */
  jitter: number;
  /** The answer's status, when there was one. */
  statusCode: number | null;
  /** The answer's `Retry-After` header, when there was one. */
  retryAfter?: string | null;
}

/** When the next attempt is due (milliseconds since the epoch), or null when the schedule is spent. */
export function nextAttemptAt({ delaysSeconds, failedAttemptNumber, nowMs, jitter, statusCode, retryAfter }: NextAttemptInput): number | null {
  if (!(jitter >= 0 && jitter < 1)) throw new RangeError(`jitter must be in [0, 1), got ${jitter}`);
  const delaySeconds = delaysSeconds[failedAttemptNumber - 1];
  if (delaySeconds === undefined) return null;
  const scheduled = nowMs + Math.round(delaySeconds * 1000 * (1 + RETRY_JITTER_FRACTION * jitter));
  if (statusCode === null || !RETRY_AFTER_STATUSES.has(statusCode)) return scheduled;
  const askedMs = parseRetryAfter(retryAfter, nowMs);
  if (askedMs === undefined) return scheduled;
  const lastDelayMs = delaysSeconds[delaysSeconds.length - 1]! * 1000;
  return Math.max(scheduled, nowMs + Math.min(askedMs, lastDelayMs));
}
