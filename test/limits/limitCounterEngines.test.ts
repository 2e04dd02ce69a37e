// The rate-limit buckets and the monthly quota counted in the store engine's database
// (src/limits/engineLimitCounters.ts, what PostgreSQL without Redis counts with), on both engines:
// concurrent bursts from two instances on the same data admit exactly the allowance.
import { and, eq, sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rateLimitCounters, workspaces } from '../../db/schema.js';
import { EngineLimitCounters } from '../../src/limits/engineLimitCounters.js';
import type { CountedCall } from '../../src/limits/sharedCallCounter.js';
import { postgresEngine, type StoreEngine } from '../../src/store/engine.js';
import { openPostgres } from '../../src/store/postgres.js';
import { storeEngines, type OpenedEngine } from '../support/engines.js';
import { sharedPostgresServer } from '../support/postgresServer.js';

const WINDOW_MS = 60_000;
const workspaceId = 'wsp_counted';

async function seedWorkspace(engine: StoreEngine): Promise<void> {
  await engine.write(() => engine.statement(engine.orm.insert(workspaces).values({ id: workspaceId, name: 'Counted', plan: 'free', createdAt: 1 })).run({}));
}

async function sharedCount(engine: StoreEngine, bucket: string, windowStart: number): Promise<number | undefined> {
  const read = engine.statement(
    engine.orm
      .select({ count: rateLimitCounters.count })
      .from(rateLimitCounters)
      .where(and(eq(rateLimitCounters.bucket, sql.placeholder('bucket')), eq(rateLimitCounters.windowStart, sql.placeholder('windowStart')))),
  );
  return (await read.value({ bucket, windowStart })) as number | undefined;
}

function burst(counters: EngineLimitCounters[], call: CountedCall, callsEach: number) {
  return Promise.all(Array.from({ length: callsEach }, () => counters.map((counter) => counter.countCall(call))).flat());
}

describe.each(storeEngines)('limit counters in the database on $name', (engineCase) => {
  let opened: OpenedEngine;
  let here: EngineLimitCounters;
  let there: EngineLimitCounters;
  // 09:41:30 on 23 November 2026 (UTC): half-way through a window.
  let at: number;

  beforeEach(async () => {
    opened = await engineCase.open({ retryDelayMs: () => 0 });
    at = Date.UTC(2026, 10, 23, 9, 41, 30);
    await seedWorkspace(opened.engine);
    here = new EngineLimitCounters(opened.engine, { now: () => at });
    // On SQLite the second instance counts on the same connection: a second connection of one process would block its
    // thread on the file's write lock (across processes the synchronous limiter is tested in test/limits/rateLimiter.test.ts).
    there = new EngineLimitCounters(engineCase.name === 'PostgreSQL' ? await opened.openAnother() : opened.engine, { now: () => at });
  });
  afterEach(() => opened.close());

  it('admits exactly N calls of a window across two instances counting concurrent bursts, each with its own remaining', async () => {
    const call = { owner: workspaceId, bucket: `wp:${workspaceId}:write`, limit: 25, windowMs: WINDOW_MS };
    const counts = await burst([here, there], call, 30);
    const admitted = counts.filter(({ decision }) => decision.allowed);
    expect(admitted).toHaveLength(25);
    expect(admitted.map(({ decision }) => decision.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, index) => index));
    // Refused calls are counted too, as on SQLite: a client hammering a spent bucket keeps it spent.
    expect(await sharedCount(opened.engine, call.bucket, at - (at % WINDOW_MS))).toBe(60);
    expect(counts.every(({ quota }) => quota === undefined)).toBe(true);
  });

  it("counts a call's units (x-ratelimit-cost) in the bucket and one call in the quota", async () => {
    const call = { owner: workspaceId, bucket: `wp:${workspaceId}:read`, limit: 30, windowMs: WINDOW_MS, units: 20, quota: { workspaceId, limit: 100 } };
    const first = await here.countCall(call);
    expect(first.decision).toMatchObject({ allowed: true, remaining: 10 });
    expect(first.quota).toMatchObject({ allowed: true, used: 1 });
    // 40 of 30 units: refused, counted in the bucket, not in the quota.
    const second = await there.countCall(call);
    expect(second.decision).toMatchObject({ allowed: false, remaining: 0 });
    expect(second.quota).toBeUndefined();
    expect(await sharedCount(opened.engine, call.bucket, at - (at % WINDOW_MS))).toBe(40);
  });

  it('never lets the capped monthly quota pass its limit under concurrent calls from two instances, nor counts calls the bucket refused', async () => {
    const call = { owner: workspaceId, bucket: `wp:${workspaceId}:read`, limit: 30, windowMs: WINDOW_MS, quota: { workspaceId, limit: 17 } };
    const counts = await burst([here, there], call, 20);
    const quotas = counts.map(({ quota }) => quota);
    // 30 calls admitted by the bucket were counted toward the quota; 10 refused by it were not.
    expect(quotas.filter((quota) => quota === undefined)).toHaveLength(10);
    const admitted = quotas.filter((quota) => quota?.allowed);
    expect(admitted.map((quota) => quota!.used).sort((a, b) => a - b)).toEqual(Array.from({ length: 17 }, (_, index) => index + 1));
    expect(quotas.filter((quota) => quota && !quota.allowed)).toHaveLength(13);
    expect(quotas.find((quota) => quota && !quota.allowed)).toMatchObject({ used: 17, limit: 17, remaining: 0, period: '2026-11', resetAt: Date.UTC(2026, 11, 1) });
    expect(await here.quotaUsage(workspaceId, at)).toEqual({ period: '2026-11', resetAt: Date.UTC(2026, 11, 1), used: 17 });
    expect((await there.quotaUsage(workspaceId, at)).used).toBe(17);
  });

  it('counts an uncapped quota without refusing, and refuses every call at a quota of 0', async () => {
    const uncapped = { owner: workspaceId, bucket: 'uncapped', limit: 100, windowMs: WINDOW_MS, quota: { workspaceId, limit: null } };
    const counts = await burst([here, there], uncapped, 5);
    expect(counts.map(({ quota }) => quota!.used).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(counts.every(({ quota }) => quota!.allowed && quota!.remaining === null && quota!.limit === null)).toBe(true);
    const none = await here.countCall({ ...uncapped, bucket: 'none', quota: { workspaceId, limit: 0 } });
    expect(none.quota).toMatchObject({ allowed: false, used: 10, limit: 0, remaining: 0 });
    expect((await there.quotaUsage(workspaceId, at)).used).toBe(10);
  });

  it('starts a new window and a new month on the injected clock, and purges the windows that ended', async () => {
    const windowStart = at - (at % WINDOW_MS);
    const call = { owner: workspaceId, bucket: 'rolling', limit: 3, windowMs: WINDOW_MS };
    for (let index = 0; index < 3; index += 1) expect((await here.countCall(call)).decision.allowed).toBe(true);
    at = windowStart + WINDOW_MS - 1;
    expect((await there.countCall(call)).decision).toEqual({
      allowed: false,
      limit: 3,
      remaining: 0,
      resetAtSeconds: (windowStart + WINDOW_MS) / 1000,
      retryAfterSeconds: 1,
    });
    at = windowStart + WINDOW_MS;
    expect((await there.countCall(call)).decision).toMatchObject({ allowed: true, remaining: 2, resetAtSeconds: (windowStart + 2 * WINDOW_MS) / 1000 });
    expect((await here.countCall(call)).decision).toMatchObject({ allowed: true, remaining: 1 });

    expect(await here.purgeWindowsBefore(windowStart + WINDOW_MS)).toBe(1);
    expect(await sharedCount(opened.engine, 'rolling', windowStart)).toBeUndefined();
    expect(await sharedCount(opened.engine, 'rolling', windowStart + WINDOW_MS)).toBe(2);

    at = Date.UTC(2026, 11, 1) - 1;
    const monthly = { owner: workspaceId, bucket: 'monthly', limit: 100, windowMs: WINDOW_MS, quota: { workspaceId, limit: 2 } };
    await here.countCall(monthly);
    await there.countCall(monthly);
    expect((await here.countCall(monthly)).quota).toMatchObject({ allowed: false, used: 2, period: '2026-11', resetAt: Date.UTC(2026, 11, 1) });
    at = Date.UTC(2026, 11, 1);
    expect((await there.countCall(monthly)).quota).toMatchObject({ allowed: true, used: 1, remaining: 1, period: '2026-12', resetAt: Date.UTC(2027, 0, 1) });
    expect((await here.quotaUsage(workspaceId, Date.UTC(2026, 11, 1) - 1)).used).toBe(2);
  });
});

// SQLite's busy fallback is its synchronous limiter's (test/limits/rateLimiter.test.ts): this
// implementation serves PostgreSQL, where a count waits on a row lock until the statement timeout.
describe('limit counters in the database on PostgreSQL, while another transaction holds a bucket past the statement timeout', () => {
  let holding: StoreEngine;
  let counting: StoreEngine;
  let counters: EngineLimitCounters;
  const at = Date.UTC(2026, 10, 23, 9, 41, 30);
  const windowStart = at - (at % WINDOW_MS);

  beforeEach(async () => {
    const url = await (await sharedPostgresServer()).createDatabase({ migrated: true });
    holding = postgresEngine((await openPostgres(url, { poolMax: 2 })).pool);
    counting = postgresEngine((await openPostgres(url, { poolMax: 2, statementTimeoutMs: 200 })).pool);
    await seedWorkspace(holding);
    counters = new EngineLimitCounters(counting, { now: () => at });
  });
  afterEach(async () => {
    await Promise.all([holding.close(), counting.close()]);
  });

  it("admits on this process's own count, counts nothing toward the quota, and adds those calls to the shared count once it can", async () => {
    const call = { owner: workspaceId, bucket: 'held', limit: 5, windowMs: WINDOW_MS, quota: { workspaceId, limit: 100 } };
    await counters.countCall(call);
    await counters.countCall(call);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const holder = holding.write(async () => {
      await holding.statement(holding.orm.update(rateLimitCounters).set({ count: sql`${rateLimitCounters.count}` }).where(eq(rateLimitCounters.bucket, 'held'))).run({});
      locked();
      await released;
    });
    await lockTaken;
    expect(await counters.countCall(call)).toEqual({ decision: expect.objectContaining({ allowed: true, remaining: 2 }) });
    expect(await counters.countCall(call)).toEqual({ decision: expect.objectContaining({ allowed: true, remaining: 1 }) });
    release();
    await holder;
    expect((await counters.countCall(call)).decision).toMatchObject({ allowed: true, remaining: 0 });
    expect(await sharedCount(holding, 'held', windowStart)).toBe(5);
    expect((await counters.quotaUsage(workspaceId, at)).used).toBe(3);
  });
});
