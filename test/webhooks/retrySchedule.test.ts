import { describe, expect, it } from 'vitest';
import { workPlatformPlanTable } from '../../src/limits/planLimits.js';

const planDefaultRetryDelays = workPlatformPlanTable().webhookRetryDelaysSeconds;
import { nextAttemptAt, parseRetryAfter } from '../../src/webhooks/retrySchedule.js';

const NOW = Date.UTC(2026, 10, 23, 9, 0, 0);
const base = { delaysSeconds: planDefaultRetryDelays, nowMs: NOW, jitter: 0, statusCode: 500 };

describe('nextAttemptAt', () => {
  it('walks the default schedule, 30 s to 24 h, then ends', () => {
    expect(planDefaultRetryDelays).toEqual([30, 120, 600, 1800, 7200, 28800, 86400]);
    const delays = [1, 2, 3, 4, 5, 6, 7].map((n) => nextAttemptAt({ ...base, failedAttemptNumber: n })! - NOW);
    expect(delays).toEqual([30_000, 120_000, 600_000, 1_800_000, 7_200_000, 28_800_000, 86_400_000]);
    expect(nextAttemptAt({ ...base, failedAttemptNumber: 8 })).toBeNull();
  });

  it('adds up to 10 % jitter, in proportion to the random number', () => {
    expect(nextAttemptAt({ ...base, failedAttemptNumber: 1, jitter: 0.5 })).toBe(NOW + 31_500);
    expect(nextAttemptAt({ ...base, failedAttemptNumber: 7, jitter: 0.999999 })).toBeLessThan(NOW + 86_400_000 * 1.1);
    expect(() => nextAttemptAt({ ...base, failedAttemptNumber: 1, jitter: 1 })).toThrow(RangeError);
    expect(() => nextAttemptAt({ ...base, failedAttemptNumber: 1, jitter: -0.1 })).toThrow(RangeError);
  });

  it('honours Retry-After on 429 and 503 only when later than the schedule, clamped to the last delay', () => {
    const first = { ...base, failedAttemptNumber: 1 };
    expect(nextAttemptAt({ ...first, statusCode: 429, retryAfter: '300' })).toBe(NOW + 300_000);
    expect(nextAttemptAt({ ...first, statusCode: 503, retryAfter: '5' })).toBe(NOW + 30_000);
    expect(nextAttemptAt({ ...first, statusCode: 503, retryAfter: String(10 * 86400) })).toBe(NOW + 86_400_000);
    expect(nextAttemptAt({ ...first, statusCode: 500, retryAfter: '300' })).toBe(NOW + 30_000);
    expect(nextAttemptAt({ ...first, statusCode: 429, retryAfter: 'soon' })).toBe(NOW + 30_000);
    expect(nextAttemptAt({ ...first, statusCode: 429, retryAfter: new Date(NOW + 3_600_000).toUTCString() })).toBe(NOW + 3_600_000);
    // Spent schedule: no attempt follows, whatever the subscriber asks.
    expect(nextAttemptAt({ ...base, failedAttemptNumber: 8, statusCode: 429, retryAfter: '1' })).toBeNull();
    // A workspace schedule's own last delay is the cap.
    expect(nextAttemptAt({ ...first, delaysSeconds: [1, 5], statusCode: 429, retryAfter: '3600' })).toBe(NOW + 5_000);
  });
});

describe('parseRetryAfter', () => {
  it('reads delay-seconds and HTTP dates (IMF-fixdate, RFC 850, asctime)', () => {
    expect(parseRetryAfter('120', NOW)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', NOW)).toBe(0);
    expect(parseRetryAfter('Mon, 23 Nov 2026 09:10:00 GMT', NOW)).toBe(600_000);
    expect(parseRetryAfter('Monday, 23-Nov-26 09:10:00 GMT', NOW)).toBe(600_000);
    expect(parseRetryAfter('Mon Nov 23 09:10:00 2026', NOW)).toBe(600_000);
    expect(parseRetryAfter('Mon, 23 Nov 2026 08:00:00 GMT', NOW)).toBe(0);
  });

  it('ignores what it cannot read', () => {
    for (const value of [undefined, null, '', '-5', '1.5', 'later', '2026-11-23']) expect(parseRetryAfter(value, NOW)).toBeUndefined();
  });
});
