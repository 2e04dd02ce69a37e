import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspaceStore } from '../../src/store/workspaces.js';
import { ContractClient, type CheckedResponse } from '../support/contractClient.js';
import { limitEngines, useRedisServer } from '../support/redisServer.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { expectProblem, expectSuccess, jsonHeaders, makeTestWorkspace, type TestWorkspace } from '../support/workPlatform.js';

const windowMs = 60_000;
const redis = useRedisServer();
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The limit headers every counted answer carries, as the contract documents them. */
function expectRateLimitHeaders(
  response: CheckedResponse,
  expected: { class: string; limit: number; remaining: number; resetSeconds: number; secondsToReset: number; tier: string },
) {
  expect(response.headers).toMatchObject({
    'x-ratelimit-class': expected.class,
    'x-ratelimit-limit': String(expected.limit),
    'x-ratelimit-remaining': String(expected.remaining),
    'x-ratelimit-reset': String(expected.resetSeconds),
    'x-ratelimit-window-ms': String(windowMs),
    'x-ratelimit-tier': expected.tier,
    'ratelimit-policy': `"${expected.class}";q=${expected.limit};w=${windowMs / 1000}`,
    ratelimit: `"${expected.class}";r=${expected.remaining};t=${expected.secondsToReset}`,
  });
}

describe.each(limitEngines(redis))('rate limits and quota with an injected clock ($engine)', ({ env }) => {
  // 10 s into a window, a little before the end of a UTC month.
  let clock = Date.UTC(2030, 0, 31, 22, 0, 10);
  let t: TestApp;
  let client: ContractClient;
  let fx: TestApp['fixture']['workPlatform'];
  const workspaces = () => createWorkspaceStore(t.store, { now: () => clock });

  /** Moves the clock 10 s into the next rate-limit window, so each test starts with full buckets. */
  function nextWindow(): { resetSeconds: number } {
    clock = clock - (clock % windowMs) + windowMs + 10_000;
    return { resetSeconds: (clock - 10_000 + windowMs) / 1000 };
  }

  beforeAll(async () => {
    t = await startTestApp({ now: () => clock, env: env() });
    client = t.workPlatformClient;
    fx = t.fixture.workPlatform;
  });
  afterAll(async () => {
    await t?.close();
  });

  const createTask = (token: string, title = 'Counted') =>
    client.request('POST', '/v1/tasks', { headers: jsonHeaders(token), body: JSON.stringify({ projectId: fx.projectId, title }) });
  const listTasks = (token: string) => client.get('/v1/tasks?limit=1', bearer(token));

  it('allows a free workspace 60 writes per window, then answers 429 rate-limited with Retry-After and the rateLimit member', async () => {
    const { resetSeconds } = nextWindow();
    for (let call = 1; call <= 60; call++) {
      const response = await createTask(fx.tokens.all);
      expectSuccess(response, 201);
      expectRateLimitHeaders(response, { class: 'write', limit: 60, remaining: 60 - call, resetSeconds, secondsToReset: 50, tier: 'free' });
    }
    const tasks = await t.sql.value('SELECT count(*) FROM tasks');
    const limited = await createTask(fx.tokens.all);
    const problem = expectProblem(limited, 429, 'rate-limited');
    expect(problem.rateLimit).toEqual({ class: 'write', limit: 60, windowMs, retryAfterSec: 50, tier: 'free' });
    expect(limited.headers['retry-after']).toBe('50');
    expectRateLimitHeaders(limited, { class: 'write', limit: 60, remaining: 0, resetSeconds, secondsToReset: 50, tier: 'free' });
    expect(await t.sql.value('SELECT count(*) FROM tasks')).toEqual(tasks);

    // The bucket is the class's, whatever the operation and whoever calls.
    const patch = await client.request('PATCH', `/v1/tasks/${fx.taskIds[0]}`, { headers: jsonHeaders(fx.tokens.session, { 'if-match': '1' }), body: '{"title":"x"}' });
    expect(expectProblem(patch, 429, 'rate-limited').rateLimit.class).toBe('write');

    // Reads are counted apart.
    const read = await listTasks(fx.tokens.all);
    expect(read.status).toBe(200);
    expectRateLimitHeaders(read, { class: 'read', limit: 300, remaining: 299, resetSeconds, secondsToReset: 50, tier: 'free' });

    // Retry-After counts down with the clock; the next window restores the allowance.
    clock += 49_000;
    expect((await createTask(fx.tokens.all)).headers['retry-after']).toBe('1');
    clock += 1_000;
    const restored = await createTask(fx.tokens.all);
    expect(restored.status).toBe(201);
    expect(restored.headers['x-ratelimit-remaining']).toBe('59');
    expect(restored.headers['x-ratelimit-reset']).toBe(String(resetSeconds + 60));
  });

  it('counts refused calls too: a 422 spends an allowance like a 201', async () => {
    nextWindow();
    const refused = await client.request('POST', '/v1/tasks', { headers: jsonHeaders(fx.tokens.all), body: '{}' });
    expectProblem(refused, 422, 'validation');
    expect(refused.headers['x-ratelimit-remaining']).toBe('59');
    expect((await createTask(fx.tokens.all)).headers['x-ratelimit-remaining']).toBe('58');
  });

  it("replaces the plan's value with the workspace's override, and the plan's applies again when it is cleared", async () => {
    const { resetSeconds } = nextWindow();
    await workspaces().setWorkspaceLimits(fx.workspaceId, { writePerMinute: 3, readPerMinute: 2 });
    try {
      for (const remaining of [2, 1, 0]) {
        const response = await createTask(fx.tokens.all);
        expect(response.status).toBe(201);
        expectRateLimitHeaders(response, { class: 'write', limit: 3, remaining, resetSeconds, secondsToReset: 50, tier: 'free' });
      }
      const limited = expectProblem(await createTask(fx.tokens.all), 429, 'rate-limited');
      expect(limited.rateLimit).toEqual({ class: 'write', limit: 3, windowMs, retryAfterSec: 50, tier: 'free' });
      for (const remaining of [1, 0]) expect((await listTasks(fx.tokens.all)).headers['x-ratelimit-remaining']).toBe(String(remaining));
      expect(expectProblem(await listTasks(fx.tokens.all), 429, 'rate-limited').rateLimit).toMatchObject({ class: 'read', limit: 2 });

      const limits = await client.get('/v1/workspace/limits', bearer(fx.tokens.session));
      expect(limits.status).toBe(429); // the read bucket is spent for every caller of the workspace

      clock += windowMs;
      const report = expectSuccess(await client.get('/v1/workspace/limits', bearer(fx.tokens.session)), 200);
      expect(report.rateLimits).toEqual({
        windowMs,
        read: { inForce: 2, planDefault: 300, override: 2 },
        write: { inForce: 3, planDefault: 60, override: 3 },
        ai: { inForce: 20, planDefault: 20, override: null },
      });
    } finally {
      await workspaces().setWorkspaceLimits(fx.workspaceId, { writePerMinute: null, readPerMinute: null });
    }
    // Same window, four writes counted: under the plan's 60 again.
    const response = await createTask(fx.tokens.all);
    expect(response.status).toBe(201);
    expect(response.headers['x-ratelimit-limit']).toBe('60');
  });

  it.each([
    ['pro', 'pro', 1200, 300],
    ['team', 'pro', 1200, 300],
    ['business', 'pro', 1200, 300],
    ['enterprise', 'enterprise', 6000, 1500],
  ] as const)('gives a %s workspace the %s tier: read %i, write %i per minute', async (plan, tier, read, write) => {
    const { resetSeconds } = nextWindow();
    const workspace = await makeTestWorkspace(t.store, t.sessionSecret, { plan, now: () => clock });
    const listed = await listTasks(workspace.pat);
    expectRateLimitHeaders(listed, { class: 'read', limit: read, remaining: read - 1, resetSeconds, secondsToReset: 50, tier });
    const created = await client.request('POST', '/v1/projects', { headers: jsonHeaders(workspace.pat), body: '{"name":"Tiered"}' });
    expectRateLimitHeaders(created, { class: 'write', limit: write, remaining: write - 1, resetSeconds, secondsToReset: 50, tier });
    // Enterprise has no monthly quota: no quota headers.
    expect(listed.headers['x-quota-limit'] === undefined).toBe(plan === 'enterprise');
  });

  describe('monthly quota', () => {
    let workspace: TestWorkspace;
    const monthEnd = Date.UTC(2030, 1, 1);

    beforeAll(async () => {
      workspace = await makeTestWorkspace(t.store, t.sessionSecret, { plan: 'free', now: () => clock });
      await createWorkspaceStore(t.store).setWorkspaceLimits(workspace.workspaceId, { monthlyQuota: 3 });
    });

    const listAs = (token: string) => client.get('/v1/tasks?limit=1', bearer(token));
    const usedThisMonth = async () => expectSuccess(await client.get('/v1/workspace/limits', bearer(workspace.session)), 200).monthlyQuota;

    it('counts PAT calls with X-Quota headers, never session calls, and answers 429 quota-exceeded past it until the month ends', async () => {
      nextWindow();
      expect(clock).toBeLessThan(monthEnd);
      const resetSeconds = String(monthEnd / 1000);

      const first = await listAs(workspace.pat);
      expect(first.headers).toMatchObject({ 'x-quota-limit': '3', 'x-quota-remaining': '2', 'x-quota-reset': resetSeconds });
      for (let call = 0; call < 3; call++) {
        const viaSession = await listAs(workspace.session);
        expect(viaSession.status).toBe(200);
        expect(Object.keys(viaSession.headers).filter((name) => name.startsWith('x-quota-'))).toEqual([]);
        expect(viaSession.headers['x-ratelimit-class']).toBe('read');
      }
      expect(await usedThisMonth()).toEqual({ inForce: 3, planDefault: 10_000, override: 3, usedThisMonth: 1, resetAt: new Date(monthEnd).toISOString() });

      // A write counts toward the same quota.
      const write = await client.request('POST', '/v1/projects', { headers: jsonHeaders(workspace.pat), body: '{"name":"Quota"}' });
      expect(write.status).toBe(201);
      expect(write.headers['x-quota-remaining']).toBe('1');
      expect((await listAs(workspace.pat)).headers['x-quota-remaining']).toBe('0');

      const spent = await listAs(workspace.pat);
      const problem = expectProblem(spent, 429, 'quota-exceeded');
      expect(problem.quota).toEqual({ period: 'month', limit: 3, used: 3, resetAt: new Date(monthEnd).toISOString() });
      expect(spent.headers['retry-after']).toBe(String(Math.ceil((monthEnd - clock) / 1000)));
      expect(spent.headers).toMatchObject({ 'x-quota-limit': '3', 'x-quota-remaining': '0', 'x-quota-reset': resetSeconds });
      expect(problem.rateLimit).toBeUndefined();
      // The refused call is not counted; session calls still work.
      expect((await usedThisMonth()).usedThisMonth).toBe(3);
      expect((await listAs(workspace.session)).status).toBe(200);

      // The month rolls over (UTC): the quota is whole again.
      clock = monthEnd + 10_000;
      const nextMonth = await listAs(workspace.pat);
      expect(nextMonth.status).toBe(200);
      expect(nextMonth.headers).toMatchObject({ 'x-quota-remaining': '2', 'x-quota-reset': String(Date.UTC(2030, 2, 1) / 1000) });
      expect(await usedThisMonth()).toMatchObject({ usedThisMonth: 1, resetAt: new Date(Date.UTC(2030, 2, 1)).toISOString() });
    });
  });

  it('does not count the public downloads', async () => {
    nextWindow();
    const before = await listTasks(fx.tokens.all);
    for (const download of ['/v1/openapi.json', '/v1/openapi.yaml', '/v1/postman.json', '/v1/postman-environment.json']) {
      const response = await client.get(download, bearer(fx.tokens.all));
      expect(response.status).toBe(200);
      expect(response.headers['x-ratelimit-limit']).toBeUndefined();
      expect(response.headers['x-quota-limit']).toBeUndefined();
    }
    const after = await listTasks(fx.tokens.all);
    expect(Number(after.headers['x-ratelimit-remaining'])).toBe(Number(before.headers['x-ratelimit-remaining']) - 1);
    expect(Number(after.headers['x-quota-remaining'])).toBe(Number(before.headers['x-quota-remaining']) - 1);
  });
});
