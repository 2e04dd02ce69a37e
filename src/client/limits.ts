// The rate-limit and quota headers of an answer, read into numbers and dates.

export interface RateLimitState {
  /** The rate-limit class the operation counts against (`read`, `write`, `ai`, …). */
  class: string | undefined;
  limit: number;
  remaining: number;
  /** When the current window restarts. */
  resetAt: Date;
  windowMs: number | undefined;
  tier: string | undefined;
}

export interface QuotaState {
  limit: number;
  remaining: number;
  /** The start of next month (UTC), when the quota restarts. */
  resetAt: Date | undefined;
}

const numberOf = (headers: Headers, name: string) => {
  const value = headers.get(name);
  return value === null || value.trim() === '' || !Number.isFinite(Number(value)) ? undefined : Number(value);
};

/** `X-RateLimit-*` of an answer; undefined when it carries none (public operations). */
export function rateLimitOf(response: Response): RateLimitState | undefined {
  const limit = numberOf(response.headers, 'x-ratelimit-limit');
  const remaining = numberOf(response.headers, 'x-ratelimit-remaining');
  const reset = numberOf(response.headers, 'x-ratelimit-reset');
  if (limit === undefined || remaining === undefined || reset === undefined) return undefined;
  return {
    class: response.headers.get('x-ratelimit-class') ?? undefined,
    limit,
    remaining,
    resetAt: new Date(reset * 1000),
    windowMs: numberOf(response.headers, 'x-ratelimit-window-ms'),
    tier: response.headers.get('x-ratelimit-tier') ?? undefined,
  };
}

/** `X-Quota-*` of an answer; undefined when the plan caps no monthly quota or the caller is a session. */
export function quotaOf(response: Response): QuotaState | undefined {
  const limit = numberOf(response.headers, 'x-quota-limit');
  const remaining = numberOf(response.headers, 'x-quota-remaining');
  if (limit === undefined || remaining === undefined) return undefined;
  const reset = numberOf(response.headers, 'x-quota-reset');
  return { limit, remaining, resetAt: reset === undefined ? undefined : new Date(reset * 1000) };
}
