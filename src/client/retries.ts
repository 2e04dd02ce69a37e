// The retry policy of the Work-Platform API's error table, as a `fetch` for openapi-fetch:
//   429 rate-limited (and 503): wait `Retry-After`, then try again;
//   500: back off 300 ms, 800 ms, 2 s;
//   a network failure: the same back-off;
//   409 (version-conflict and every other), 429 quota-exceeded and every other 4xx: never.
// Every POST carries an Idempotency-Key (the caller's, or a new UUID) that stays the same across
// its retries, so a retried create never creates twice.

import { problemOf } from './problems.js';

export interface RetryOptions {
  /** Waits between attempts (500s and network failures), in milliseconds. Default 300, 800, 2000. */
  backoffMs?: readonly number[];
  /** How many times a 429 or 503 is waited out. Default 2. */
  maxRetryAfterRetries?: number;
  /** A longer `Retry-After` is not waited for: the answer is returned as it is. Default 60 s. */
  maxRetryAfterSeconds?: number;
  /** How to wait (tests inject a clock). */
  sleep?: (ms: number) => Promise<void>;
  /** Where a new Idempotency-Key comes from. */
  newIdempotencyKey?: () => string;
}

export const DEFAULT_BACKOFF_MS = [300, 800, 2000] as const;

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The problem slug of a 429 answer (`rate-limited`, `quota-exceeded`, …), read from a copy of it. */
async function slugOf(response: Response): Promise<string | undefined> {
  return problemOf(await response.clone().json().catch(() => undefined))?.slug;
}

function retryAfterSeconds(response: Response): number | undefined {
  const header = response.headers.get('retry-after');
  if (header === null) return undefined;
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
}

export function retryingFetch(fetchImpl: (request: Request) => Promise<Response>, options: RetryOptions = {}): (request: Request) => Promise<Response> {
  const backoff = options.backoffMs ?? DEFAULT_BACKOFF_MS;
  const maxRetryAfterRetries = options.maxRetryAfterRetries ?? 2;
  const maxRetryAfterSeconds = options.maxRetryAfterSeconds ?? 60;
  const sleep = options.sleep ?? wait;
  const newKey = options.newIdempotencyKey ?? (() => crypto.randomUUID());

  return async (original: Request) => {
    let request = original;
    if (request.method === 'POST' && !request.headers.has('idempotency-key')) {
      const headers = new Headers(request.headers);
      headers.set('idempotency-key', newKey());
      request = new Request(request, { headers });
    }
    let backoffUsed = 0;
    let retryAfterUsed = 0;
    for (;;) {
      let response: Response;
      try {
        response = await fetchImpl(request.clone());
      } catch (error) {
        if (backoffUsed >= backoff.length) throw error;
        await sleep(backoff[backoffUsed++]!);
        continue;
      }
      if (response.status === 500 && backoffUsed < backoff.length) {
        await response.body?.cancel();
        await sleep(backoff[backoffUsed++]!);
        continue;
      }
      if (response.status === 429 || response.status === 503) {
        const seconds = retryAfterSeconds(response);
        // A spent monthly quota resets at the start of next month: waiting in the process is never right.
        const waitable = seconds !== undefined && seconds <= maxRetryAfterSeconds && retryAfterUsed < maxRetryAfterRetries && (response.status === 503 || (await slugOf(response)) !== 'quota-exceeded');
        if (waitable) {
          retryAfterUsed += 1;
          await response.body?.cancel();
          await sleep(seconds * 1000);
          continue;
        }
      }
      return response;
    }
  };
}
