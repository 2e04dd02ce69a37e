import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { openRedisConnection, type RedisConnection } from '../../src/limits/redisConnection.js';
import { leaseUnits, RedisLimitCounters } from '../../src/limits/redisLimitCounters.js';
import type { CountedCall } from '../../src/limits/sharedCallCounter.js';
import { memoryLogger } from '../support/testApp.js';
import { startRedisServer, type RedisServer } from '../support/redisServer.js';

const WINDOW = 60_000;
let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

let clock: number;
let retryClock: number;
let logLines: string[];
let connections: RedisConnection[];
let prefix: string;
let testNumber = 0;
beforeEach(() => {
  // 10 s into a window, in the middle of a UTC month.
  clock = Date.UTC(2030, 0, 15, 12, 0, 10);
  retryClock = 0;
  logLines = [];
  connections = [];
  testNumber += 1;
  prefix = `test-${testNumber}:`;
});
afterEach(async () => {
  for (const connection of connections) await connection.close();
});

/** A server process's counters: its own connection (a command timeout of 200 ms) on the shared Redis. */
async function counters(commandTimeoutMs = 200): Promise<RedisLimitCounters> {
  const connection = await openRedisConnection(
    { url: server.url, keyPrefix: prefix, connectTimeoutMs: 1_000, commandTimeoutMs },
    memoryLogger(logLines),
    () => retryClock,
  );
  connections.push(connection);
  return new RedisLimitCounters(connection, { keyPrefix: prefix, now: () => clock });
}
const call = (limit: number, extra: Partial<CountedCall> = {}): CountedCall => ({ owner: 'wrk_1', bucket: 'wp:wrk_1:read', limit, windowMs: WINDOW, ...extra });
const logged = (message: RegExp) => logLines.filter((line) => message.test((JSON.parse(line) as { msg: string }).msg));

describe('RedisLimitCounters: the rate-limit windows', () => {
  it('admits the limit in a window with the same figures as SQLite, refuses the next call, and starts again in the next window', async () => {
    const limiter = await counters();
    const windowEnd = Date.UTC(2030, 0, 15, 12, 1, 0);
    const decisions = [];
    for (let index = 0; index < 4; index += 1) decisions.push((await limiter.countCall(call(3))).decision);
    expect(decisions).toEqual([
      { allowed: true, limit: 3, remaining: 2, resetAtSeconds: windowEnd / 1000, retryAfterSeconds: 50 },
      { allowed: true, limit: 3, remaining: 1, resetAtSeconds: windowEnd / 1000, retryAfterSeconds: 50 },
      { allowed: true, limit: 3, remaining: 0, resetAtSeconds: windowEnd / 1000, retryAfterSeconds: 50 },
      { allowed: false, limit: 3, remaining: 0, resetAtSeconds: windowEnd / 1000, retryAfterSeconds: 50 },
    ]);
    clock = windowEnd;
    expect((await limiter.countCall(call(3))).decision).toMatchObject({ allowed: true, remaining: 2, resetAtSeconds: windowEnd / 1000 + 60 });
  });

  it("counts a call's units (x-ratelimit-cost) in the window, and the quota one call at a time", async () => {
    const limiter = await counters();
    const expensive = call(30, { units: 20, quota: { workspaceId: 'wrk_1', limit: 100 } });
    const first = await limiter.countCall(expensive);
    expect(first.decision).toMatchObject({ allowed: true, remaining: 10 });
    expect(first.quota).toMatchObject({ allowed: true, used: 1 });
    expect((await limiter.countCall(call(30))).decision).toMatchObject({ allowed: true, remaining: 9 });
    const refused = await limiter.countCall(expensive);
    expect(refused.decision).toMatchObject({ allowed: false, remaining: 0 });
    expect(refused.quota).toBeUndefined();
    // The window key's expiry was set by the first count (its INCRBY made the key).
    const windowKey = `${prefix}{wrk_1}:rate:wp:wrk_1:read:${clock - (clock % WINDOW)}`;
    expect(Number(await connections[0]!.redis.get(windowKey))).toBe(41);
    expect(await connections[0]!.redis.pttl(windowKey)).toBeGreaterThan(0);
  });

  it('keeps every key under its prefix, expiring a window key a window after the window ends', async () => {
    const limiter = await counters();
    await limiter.countCall(call(3));
    const redis = connections[0]!.redis;
    const keys = await redis.keys('*');
    const windowStart = Date.UTC(2030, 0, 15, 12, 0, 0);
    expect(keys).toContain(`${prefix}{wrk_1}:rate:wp:wrk_1:read:${windowStart}`);
    expect(keys.every((key) => key.startsWith('test-'))).toBe(true);
    const ttl = await redis.pttl(`${prefix}{wrk_1}:rate:wp:wrk_1:read:${windowStart}`);
    expect(ttl).toBeGreaterThan(WINDOW);
    expect(ttl).toBeLessThanOrEqual(50_000 + WINDOW);
  });

  it('is exact across processes: of 60 concurrent calls from two counters, exactly the limit is admitted', async () => {
    const [first, second] = [await counters(), await counters()];
    const decisions = await Promise.all(Array.from({ length: 60 }, (_, index) => (index % 2 === 0 ? first! : second!).countCall(call(25))));
    expect(decisions.filter(({ decision }) => decision.allowed)).toHaveLength(25);
    expect(decisions.map(({ decision }) => decision.remaining).sort((a, b) => a - b).slice(-1)).toEqual([24]);
  });
});

describe('RedisLimitCounters: the monthly quota', () => {
  const quotaCall = (quota: number | null, rateLimit = 1_000) => call(rateLimit, { quota: { workspaceId: 'wrk_1', limit: quota } });

  it('counts admitted calls up to the quota, refuses the next without counting it, and restarts with the UTC month', async () => {
    const limiter = await counters();
    const resetAt = Date.UTC(2030, 1, 1);
    const quotas = [];
    for (let index = 0; index < 3; index += 1) quotas.push((await limiter.countCall(quotaCall(2))).quota);
    expect(quotas).toEqual([
      { period: '2030-01', resetAt, allowed: true, used: 1, limit: 2, remaining: 1 },
      { period: '2030-01', resetAt, allowed: true, used: 2, limit: 2, remaining: 0 },
      { period: '2030-01', resetAt, allowed: false, used: 2, limit: 2, remaining: 0 },
    ]);
    expect(await limiter.quotaUsage('wrk_1', clock)).toEqual({ period: '2030-01', resetAt, used: 2 });
    // The month's key goes a day after the month ends.
    const ttl = await connections[0]!.redis.pttl(`${prefix}{wrk_1}:quota:2030-01`);
    expect(ttl).toBeGreaterThan(resetAt - clock);
    expect(ttl).toBeLessThanOrEqual(resetAt - clock + 24 * 3600 * 1000);

    clock = resetAt + 10_000;
    expect((await limiter.countCall(quotaCall(2))).quota).toMatchObject({ period: '2030-02', allowed: true, used: 1 });
  });

  it('never counts a call the rate limit refused, and counts an uncapped quota without a limit', async () => {
    const limiter = await counters();
    await limiter.countCall(quotaCall(10, 1));
    const refused = await limiter.countCall(quotaCall(10, 1));
    expect(refused.decision.allowed).toBe(false);
    expect(refused.quota).toBeUndefined();
    expect((await limiter.quotaUsage('wrk_1', clock)).used).toBe(1);
    clock += WINDOW;
    expect((await limiter.countCall(quotaCall(null, 1))).quota).toMatchObject({ allowed: true, used: 2, limit: null, remaining: null });
  });

  it('refuses every call under a quota of 0', async () => {
    const limiter = await counters();
    expect((await limiter.countCall(quotaCall(0))).quota).toMatchObject({ allowed: false, used: 0, remaining: 0 });
  });

  it('is exact across processes: two counters admit exactly the quota', async () => {
    const [first, second] = [await counters(), await counters()];
    const counts = await Promise.all(Array.from({ length: 50 }, (_, index) => (index % 2 === 0 ? first! : second!).countCall(quotaCall(30))));
    expect(counts.filter(({ quota }) => quota?.allowed)).toHaveLength(30);
    expect((await first!.quotaUsage('wrk_1', clock)).used).toBe(30);
  });
});

describe('RedisLimitCounters: while Redis does not answer', () => {
  const quotaCall = call(5, { quota: { workspaceId: 'wrk_1', limit: 4 } });
  const sharedQuota = () => connections[0]!.redis.get(`${prefix}{wrk_1}:quota:2030-01`);

  it('fails open on its own counts when a count times out, logs that once, and once when Redis answers again', async () => {
    const limiter = await counters(100);
    expect((await limiter.countCall(quotaCall)).decision.remaining).toBe(4);

    server.pause();
    try {
      const during = [];
      for (let index = 0; index < 4; index += 1) {
        during.push(await limiter.countCall(quotaCall));
        // Each call finds Redis due for another try, so each one waits for the command timeout.
        retryClock += 1_000;
      }
      expect(during.map(({ decision }) => decision.remaining)).toEqual([3, 2, 1, 0]);
      // The quota: the last count read (1) plus this process's calls up to the quota (4); then refused.
      expect(during.map(({ quota }) => quota?.allowed)).toEqual([true, true, true, false]);
      expect(await limiter.quotaUsage('wrk_1', clock)).toMatchObject({ used: 4 });
      expect(logged(/Redis unreachable/)).toHaveLength(1);
    } finally {
      server.resume();
    }
    retryClock += 1_000;
    expect((await limiter.countCall(call(5, { bucket: 'wp:wrk_1:write', quota: { workspaceId: 'wrk_1', limit: 4 } }))).quota).toMatchObject({ allowed: false, used: 4 });
    expect(logged(/Redis reachable again/)).toHaveLength(1);
    // The counts that timed out ran once Redis resumed: they are not added a second time.
    expect(await limiter.writeUnwrittenQuotaCalls()).toBe(0);
    expect(await sharedQuota()).toBe('4');
    expect(logged(/Redis unreachable/)).toHaveLength(1);
  });

  it('counts in Redis a call whose answer came while this process was busy past the command timeout', async () => {
    const limiter = await counters(50);
    expect((await limiter.countCall(call(3))).decision.remaining).toBe(2);
    const counting = limiter.countCall(call(3));
    // Busy past the timeout (as a loaded machine or a pause for garbage collection makes it): Redis
    // answers meanwhile, and the due timer runs before the event loop reads the answer.
    const busyUntil = performance.now() + 300;
    while (performance.now() < busyUntil);
    expect((await counting).decision).toMatchObject({ allowed: true, remaining: 1 });
    expect(logged(/Redis unreachable/)).toHaveLength(0);
    expect(connections[0]!.usable()).toBe(true);
  });

  it('decides at once without a connection, and adds the quota calls it admitted once Redis is back', async () => {
    const limiter = await counters();
    await limiter.countCall(quotaCall);
    await server.kill();
    try {
      await vi.waitFor(() => expect(connections[0]!.usable()).toBe(false), { timeout: 10_000, interval: 20 });
      const during = [await limiter.countCall(quotaCall), await limiter.countCall(quotaCall)];
      expect(during.map(({ decision }) => decision.remaining)).toEqual([3, 2]);
      expect(during.map(({ quota }) => quota?.used)).toEqual([2, 3]);
      expect(await limiter.writeUnwrittenQuotaCalls()).toBe(0);
      expect(logged(/Redis unreachable/)).toHaveLength(1);
    } finally {
      await server.restart();
    }
    await vi.waitFor(() => expect(connections[0]!.usable()).toBe(true), { timeout: 10_000, interval: 50 });
    expect(logged(/Redis reachable again/)).toHaveLength(1);
    // A Redis without persistence lost its counts in the crash: what this process admitted meanwhile is added.
    expect(await limiter.writeUnwrittenQuotaCalls()).toBe(2);
    expect(await sharedQuota()).toBe('2');
    expect(logged(/Redis unreachable/)).toHaveLength(1);
    expect(logLines.join('\n')).toContain(`redis://127.0.0.1:${server.port}`);
  });
});

describe('RedisLimitCounters: leases of large limits', () => {
  /** Scripts Redis ran (each one round trip of a count), from its own statistics. */
  const countsRun = async () => {
    const stats = await connections[0]!.redis.info('commandstats');
    return [...stats.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+)/g)].reduce((sum, match) => sum + Number(match[1]), 0);
  };

  it('takes a thousandth of the limit at once: never more than the limit across two processes, at most a lease per process short of it', async () => {
    const [first, second] = [await counters(), await counters()];
    const before = await countsRun();
    const limit = 10_000;
    const decisions = [];
    // Concurrent batches from both processes, past the limit.
    for (let batch = 0; batch < 60; batch += 1) {
      decisions.push(...(await Promise.all(Array.from({ length: 200 }, (_, index) => (index % 2 === 0 ? first! : second!).countCall(call(limit))))));
    }
    const admitted = decisions.filter(({ decision }) => decision.allowed).length;
    expect(admitted).toBeLessThanOrEqual(limit);
    expect(admitted).toBeGreaterThanOrEqual(limit - 2 * leaseUnits(limit));
    // 12,000 calls: about one round trip per 10 admitted calls, then one per refused call.
    const roundTrips = (await countsRun()) - before;
    expect(roundTrips).toBeLessThan(admitted / leaseUnits(limit) + (decisions.length - admitted) + 10);
    expect(roundTrips).toBeLessThan(decisions.length / 3);
    // X-RateLimit-Remaining counts down through a lease and is never more than what is left.
    const remaining = decisions.filter(({ decision }) => decision.allowed).map(({ decision }) => decision.remaining);
    expect(Math.min(...remaining)).toBeLessThanOrEqual(2 * leaseUnits(limit));
    expect(leaseUnits(limit)).toBe(10);
  });

  it('stays exact, one round trip a call, for the ai class, a limit under 2,000, and a capped quota', async () => {
    const limiter = await counters();
    for (const [counted, times] of [
      [call(100_000, { bucket: 'wp:wrk_1:ai', exact: true }), 30],
      [call(1_999, { bucket: 'wp:wrk_1:write' }), 30],
      [call(100_000, { bucket: 'wp:wrk_1:read', quota: { workspaceId: 'wrk_1', limit: 1_000_000 } }), 30],
    ] as const) {
      const before = await countsRun();
      const decisions = [];
      for (let index = 0; index < times; index += 1) decisions.push(await limiter.countCall(counted));
      expect((await countsRun()) - before).toBe(times);
      expect(decisions.map(({ decision }) => counted.limit - decision.remaining)).toEqual(Array.from({ length: times }, (_, index) => index + 1));
    }
    expect((await limiter.quotaUsage('wrk_1', clock)).used).toBe(30);
  });

  it("counts an uncapped quota's leased calls here and writes them to Redis within the second's job", async () => {
    const [first, second] = [await counters(), await counters()];
    for (let index = 0; index < 100; index += 1) await first!.countCall(call(100_000, { quota: { workspaceId: 'wrk_1', limit: null } }));
    expect((await first!.quotaUsage('wrk_1', clock)).used).toBe(100);
    expect(await first!.writeUnwrittenQuotaCalls()).toBeGreaterThan(90);
    expect((await second!.quotaUsage('wrk_1', clock)).used).toBe(100);
  });
});
