// Expensive calls (x-ratelimit-cost above 1: the analytics) on both engines: their units are
// deducted from the read bucket (SQLite's counter here, Redis in the api-postgres project), they
// run behind the concurrency caps (the per-workspace cap and the bounded queue answer the documented
// 429), and on PostgreSQL behind a capped share of the pool. Places are held through the app's own
// gate with calls that end when the test says so: no timing, no sleeps.
import { beforeAll, describe, expect, it } from 'vitest';
import { rateLimitCosts } from '../../generated/work-platform/rules.js';
import type { ContractClient } from '../support/contractClient.js';
import { analyticsWorkspace, getAnalytics } from '../support/analytics.js';
import { type TestApp, useTestApp } from '../support/testApp.js';
import { bearer } from '../support/testApp.js';
import { expectProblem, expectSuccess } from '../support/workPlatform.js';

let t: TestApp;
let client: ContractClient;
// A fixed clock: every call of a test falls in one rate-limit window.
const NOW = Date.UTC(2026, 5, 1, 12, 0, 10);
useTestApp(({ workPlatform: app }) => ({ t, client } = app), {
  liftCallLimits: true,
  now: () => NOW,
  config: { expensiveCalls: { threads: 1, queued: 1, perWorkspace: 1, postgresConnections: 1 } },
});

let ws: Awaited<ReturnType<typeof analyticsWorkspace>>;
const query = { from: '2026-05-01', to: '2026-06-01', bucket: 'day' };
const throughput = (token = ws.pat) => getAnalytics(client, 'tasks/throughput', query, token);

beforeAll(async () => {
  ws = await analyticsWorkspace(t.store, t.sessionSecret);
  await ws.task({ createdAt: Date.UTC(2026, 4, 3, 9), doneAt: [Date.UTC(2026, 4, 4, 9)] });
});

/** Holds one place of the gate for `workspaceId` until `release()`; resolves once it holds it (or waits in the queue). */
function holdPlace(workspaceId: string): { release(): void; ended: Promise<unknown> } {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const ended = t.app.expensiveCalls.gate.run(workspaceId, () => held);
  return { release, ended };
}

describe('expensive calls', () => {
  it('declare their cost in the served document, and the build lists it', async () => {
    expect(rateLimitCosts).toEqual({ getTaskThroughput: 5, getTaskCycleTime: 10, getOverdueTasks: 20, getDealPipeline: 5 });
    const document = expectSuccess(await client.get('/v1/openapi.json'), 200);
    const operation = document.paths['/v1/analytics/tasks/overdue'].get;
    expect(operation['x-ratelimit-cost']).toBe(20);
    expect(operation.description).toContain('Costs 20 units');
    expect(document.paths['/v1/tasks'].get['x-ratelimit-cost']).toBeUndefined();
  });

  it('count their x-ratelimit-cost units in the read bucket, shown in X-RateLimit-Remaining', async () => {
    const list = await client.get('/v1/tasks?limit=1', bearer(ws.pat));
    expectSuccess(list, 200);
    const before = Number(list.headers['x-ratelimit-remaining']);
    const limit = Number(list.headers['x-ratelimit-limit']);
    const answer = await throughput();
    expectSuccess(answer, 200);
    expect(answer.headers['x-ratelimit-class']).toBe('read');
    expect(Number(answer.headers['x-ratelimit-limit'])).toBe(limit);
    expect(Number(answer.headers['x-ratelimit-remaining'])).toBe(before - 5);
    expect(answer.headers.ratelimit).toBe(`"read";r=${before - 5};t=50`);
    const overdue = await getAnalytics(client, 'tasks/overdue', query, ws.pat);
    expectSuccess(overdue, 200);
    expect(Number(overdue.headers['x-ratelimit-remaining'])).toBe(before - 25);
    // A list call still counts one unit.
    const again = await client.get('/v1/tasks?limit=1', bearer(ws.pat));
    expect(Number(again.headers['x-ratelimit-remaining'])).toBe(before - 26);
  });

  it('answer 429 rate-limited, code workspace-concurrency-cap, with Retry-After, beyond the workspace\'s calls in flight', async () => {
    const held = holdPlace(ws.workspaceId);
    try {
      const refused = await throughput();
      const body = expectProblem(refused, 429, 'rate-limited', 'workspace-concurrency-cap');
      expect(refused.headers['retry-after']).toBe('1');
      expect(body.rateLimit).toBeUndefined();
      // The limit headers of the counted call are on the refusal too.
      expect(refused.headers['x-ratelimit-class']).toBe('read');
      // Other workspaces and cheap calls are not held.
      expectSuccess(await client.get('/v1/tasks?limit=1', bearer(ws.pat)), 200);
    } finally {
      held.release();
      await held.ended;
    }
    expectSuccess(await throughput(), 200);
  });

  it('answer 429 rate-limited, code expensive-call-queue-full, with Retry-After, when the running calls and the queue are full', async () => {
    // One runs (threads 1, or one PostgreSQL connection), one waits (queue 1): the queue is full.
    const running = holdPlace('wks_somebodyElse1');
    const waiting = holdPlace('wks_somebodyElse2');
    expect(t.app.expensiveCalls.gate.load()).toEqual({ running: 1, waiting: 1, workspaces: 2 });
    try {
      const refused = await throughput();
      expectProblem(refused, 429, 'rate-limited', 'expensive-call-queue-full');
      expect(refused.headers['retry-after']).toBe('1');
      // Cheap calls still answer: on PostgreSQL the expensive ones hold at most their share of the pool.
      expectSuccess(await client.get('/v1/tasks?limit=1', bearer(ws.pat)), 200);
    } finally {
      running.release();
      waiting.release();
      await Promise.all([running.ended, waiting.ended]);
    }
    expect(t.app.expensiveCalls.gate.load()).toEqual({ running: 0, waiting: 0, workspaces: 0 });
    expectSuccess(await throughput(), 200);
  });

  it('run on SQLite in worker threads, on PostgreSQL in a capped share of the pool', async () => {
    const { gate, pool } = t.app.expensiveCalls;
    expect(gate.limits).toMatchObject({ running: 1, queued: 1, perWorkspace: 1 });
    if (t.engineKind === 'sqlite') {
      expect(pool).toBeDefined();
      expect(pool!.threads()).toBe(1);
    } else {
      expect(pool).toBeUndefined();
    }
  });
});
