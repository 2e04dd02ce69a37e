// GET /livez, GET /readyz and GET / on the real server (real SQLite file, real HTTP on port 0, and a
// real redis-server where Redis is checked), with an injected clock for /readyz's one-second cache.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { startRedisServer, type RedisServer } from '../support/redisServer.js';

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: Record<string, unknown>;
}

async function get(app: TestApp, path: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(`${app.app.url}${path}`, init);
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

const ERROR_TYPE_BASE = 'https://errors.work-platform.example/problems';

function expectProbeHeaders(answer: Answer): void {
  expect(answer.headers.get('cache-control')).toBe('no-store');
  expect(answer.headers.get('x-request-id')).toMatch(/^req_/);
}

describe('GET /livez and GET /readyz on a healthy server', () => {
  let t: TestApp;
  let clock = Date.parse('2026-11-27T12:00:00Z');
  beforeAll(async () => {
    t = await startTestApp({ now: () => clock });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('/livez answers 200 with x-request-id and Cache-Control: no-store, to GET and HEAD, without authentication', async () => {
    const answer = await get(t, '/livez');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ status: 'live' });
    expectProbeHeaders(answer);
    const head = await fetch(`${t.app.url}/livez`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    const echoed = await get(t, '/livez', { headers: { 'x-request-id': 'probe-1' } });
    expect(echoed.headers.get('x-request-id')).toBe('probe-1');
  });

  it('/readyz answers 200 naming every check, with the age of the oldest due delivery', async () => {
    const answer = await get(t, '/readyz');
    expect(answer.status, answer.text).toBe(200);
    expectProbeHeaders(answer);
    expect(answer.body.status).toBe('ready');
    expect(answer.body.checks).toEqual({ database: 'ok', migrations: 'ok', shutdown: 'ok' });
    expect(answer.body).toHaveProperty('oldestDueDeliveryAgeSeconds');
  });

  it('reports the oldest due delivery in whole seconds, and null when none is due', async () => {
    clock += 5_000;
    await t.sql.run("UPDATE webhook_deliveries SET status = 'SUCCEEDED', next_attempt_at = NULL, completed_at = ? WHERE status = 'PENDING'", clock);
    expect((await get(t, '/readyz')).body.oldestDueDeliveryAgeSeconds).toBeNull();

    // A change the demo subscription hears of queues a delivery (the worker is off in the API suites).
    const created = await fetch(`${t.app.url}/v1/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.fixture.workPlatform.tokens.all}`, 'content-type': 'application/json' },
      body: JSON.stringify({ projectId: t.fixture.workPlatform.projectId, title: 'Queues a delivery' }),
    });
    expect(created.status).toBe(201);
    const [delivery] = await t.sql.rows<{ id: string }>('SELECT id FROM webhook_deliveries LIMIT 1');
    expect(delivery, 'a delivery was queued').toBeDefined();
    await t.sql.run("UPDATE webhook_deliveries SET status = 'PENDING', next_attempt_at = ?, completed_at = NULL WHERE id = ?", clock - 90_500, delivery!.id);
    // Cached for a second, then read again.
    expect((await get(t, '/readyz')).body.oldestDueDeliveryAgeSeconds).toBeNull();
    clock += 1_000;
    const answer = await get(t, '/readyz');
    expect(answer.body.oldestDueDeliveryAgeSeconds).toBe(91);
    // Informational: a late delivery alone does not fail readiness.
    expect(answer.status).toBe(200);
  });

  it('are not written to the request log', async () => {
    for (let index = 0; index < 3; index += 1) expect((await get(t, '/readyz')).status).toBe(200);
    expect(t.logLines.filter((line) => line.includes('/readyz') || line.includes('/livez'))).toEqual([]);
  });

  it('answer 405 to other methods', async () => {
    for (const path of ['/livez', '/readyz']) {
      const answer = await get(t, path, { method: 'POST' });
      expect(answer.status).toBe(405);
      expect(answer.headers.get('allow')).toBe('GET, HEAD');
    }
  });

  it('/readyz turns 503 at once when the server starts shutting down, cache or not, and the APIs keep serving', async () => {
    expect((await get(t, '/readyz')).status).toBe(200);
    t.app.markShuttingDown();
    const answer = await get(t, '/readyz');
    expect(answer.status).toBe(503);
    expect(answer.headers.get('content-type')).toBe('application/problem+json');
    expect(answer.body.checks).toEqual({ database: 'ok', migrations: 'ok', shutdown: 'fail' });
    expect(answer.body.type).toBe(`${ERROR_TYPE_BASE}/not-ready`);
    const served = await fetch(`${t.app.url}/v1/tasks?limit=1`, { headers: { authorization: `Bearer ${t.fixture.workPlatform.tokens.all}` } });
    expect(served.status).toBe(200);
    expect(served.headers.get('connection')).not.toBe('close');
    expect((await get(t, '/livez')).status).toBe(200);
  });
});

describe('GET /readyz when a check fails', () => {
  let t: TestApp;
  let clock = Date.parse('2026-11-27T12:00:00Z');
  beforeAll(async () => {
    t = await startTestApp({ now: () => clock });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('names the migrations when the database lacks one of this build', async () => {
    expect((await get(t, '/readyz')).status).toBe(200);
    const newest = await t.sql.row<{ hash: string; created_at: number }>('SELECT hash, created_at FROM __drizzle_migrations ORDER BY created_at DESC LIMIT 1');
    await t.sql.run('DELETE FROM __drizzle_migrations WHERE created_at = ?', newest!.created_at);
    clock += 1_000;
    const answer = await get(t, '/readyz');
    expect(answer.status).toBe(503);
    expect(answer.body.checks).toEqual({ database: 'ok', migrations: 'fail', shutdown: 'ok' });
    await t.sql.run('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)', newest!.hash, newest!.created_at);
    clock += 1_000;
    expect((await get(t, '/readyz')).status).toBe(200);
  });

  it('keeps its answer for a second, then names only the database when it cannot be read, never its path or error', async () => {
    clock += 1_000;
    expect((await get(t, '/readyz')).status).toBe(200);
    t.db.close();
    // Within the second: the answer of the last run.
    clock += 999;
    expect((await get(t, '/readyz')).status).toBe(200);
    clock += 1;
    const answer = await get(t, '/readyz');
    expect(answer.status).toBe(503);
    expectProbeHeaders(answer);
    expect(answer.headers.get('content-type')).toBe('application/problem+json');
    expect(answer.body).toMatchObject({
      type: `${ERROR_TYPE_BASE}/not-ready`,
      title: 'Not ready',
      status: 503,
      checks: { database: 'fail', migrations: 'unknown', shutdown: 'ok' },
      oldestDueDeliveryAgeSeconds: null,
    });
    expect(answer.body.requestId).toBe(answer.headers.get('x-request-id'));
    expect(answer.text).not.toContain(t.dataDir);
    expect(answer.text.toLowerCase()).not.toContain('not open');
    // The operator learns why from the log, once.
    expect(t.logLines.filter((line) => line.includes('readiness check failed'))).toHaveLength(2);
    clock += 1_000;
    await get(t, '/readyz');
    expect(t.logLines.filter((line) => line.includes('readiness check failed'))).toHaveLength(2);
    expect((await get(t, '/livez')).status).toBe(200);
  });
});

describe('GET /readyz with REDIS_URL', () => {
  let t: TestApp;
  let redis: RedisServer;
  let clock = Date.parse('2026-11-27T12:00:00Z');
  beforeAll(async () => {
    redis = await startRedisServer();
    t = await startTestApp({ now: () => clock, env: { REDIS_URL: redis.url, REDIS_KEY_PREFIX: 'health-test:' } });
  });
  afterAll(async () => {
    await t?.close();
    await redis?.stop();
  });

  it('checks Redis, and names only Redis once it stops answering', async () => {
    const ready = await get(t, '/readyz');
    expect(ready.status, ready.text).toBe(200);
    expect(ready.body.checks).toEqual({ database: 'ok', migrations: 'ok', redis: 'ok', shutdown: 'ok' });
    await redis.stop();
    clock += 1_000;
    const answer = await get(t, '/readyz');
    expect(answer.status).toBe(503);
    expect(answer.body.checks).toEqual({ database: 'ok', migrations: 'ok', redis: 'fail', shutdown: 'ok' });
    expect(answer.body.detail).toBe('Not ready: redis failed.');
    expect(answer.text).not.toContain(new URL(redis.url).port);
  });
});

describe('GET /', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { PUBLIC_BASE_URL: 'https://api.example.com' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  const served = (api: string) => JSON.parse(readFileSync(new URL(`../../generated/${api}/openapi.json`, import.meta.url), 'utf8')) as { info: { title: string; version: string } };

  it('answers a JSON index of the APIs, their reference pages, downloads and the health probes, on the public base URL', async () => {
    const answer = await get(t, '/');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(answer.headers.get('x-request-id')).toMatch(/^req_/);
    const base = 'https://api.example.com';
    expect(answer.body).toEqual({
      apis: [
        {
          title: served('portfolio').info.title,
          version: served('portfolio').info.version,
          baseUrl: `${base}/api/v1`,
          docs: `${base}/api/v1/docs`,
          downloads: {
            'openapi.json': `${base}/api/v1/openapi.json`,
            'openapi.yaml': `${base}/api/v1/openapi.yaml`,
            'postman.json': `${base}/api/v1/postman.json`,
            'changelog.json': `${base}/api/v1/changelog.json`,
          },
        },
        {
          title: served('work-platform').info.title,
          version: served('work-platform').info.version,
          baseUrl: `${base}/v1`,
          docs: `${base}/v1/docs`,
          downloads: {
            'openapi.json': `${base}/v1/openapi.json`,
            'openapi.yaml': `${base}/v1/openapi.yaml`,
            'postman.json': `${base}/v1/postman.json`,
            'postman-environment.json': `${base}/v1/postman-environment.json`,
            'changelog.json': `${base}/v1/changelog.json`,
          },
        },
      ],
      health: { livez: `${base}/livez`, readyz: `${base}/readyz` },
    });
  });

  it('names only addresses the server answers', async () => {
    const index = (await get(t, '/')).body as { apis: { docs: string; downloads: Record<string, string> }[]; health: Record<string, string> };
    const urls = [...index.apis.flatMap((api) => [api.docs, ...Object.values(api.downloads)]), ...Object.values(index.health)];
    for (const url of urls) {
      const response = await fetch(`${t.app.url}${new URL(url).pathname}`);
      expect(response.status, url).toBe(200);
    }
  });

  it('answers 405 to other methods', async () => {
    const answer = await get(t, '/', { method: 'DELETE' });
    expect(answer.status).toBe(405);
    expect(answer.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('GET /readyz on PostgreSQL', () => {
  let t: TestApp;
  let clock = Date.parse('2026-11-27T12:00:00Z');
  beforeAll(async () => {
    // The app on a PostgreSQL database of its own and its limits in a redis-server of its own (test/support/testApp.ts).
    const engine = process.env.TEST_ENGINE;
    process.env.TEST_ENGINE = 'postgres';
    try {
      t = await startTestApp({ now: () => clock });
    } finally {
      if (engine === undefined) delete process.env.TEST_ENGINE;
      else process.env.TEST_ENGINE = engine;
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  it('reads its migrations from drizzle.__drizzle_migrations and names them when one is missing', async () => {
    const ready = await get(t, '/readyz');
    expect(ready.status, ready.text).toBe(200);
    expect(ready.body.checks).toEqual({ database: 'ok', migrations: 'ok', redis: 'ok', shutdown: 'ok' });
    const newest = await t.sql.value<number>('SELECT max(created_at) FROM drizzle.__drizzle_migrations');
    const [row] = await t.sql.rows<{ hash: string; created_at: number }>('SELECT hash, created_at FROM drizzle.__drizzle_migrations WHERE created_at = ?', newest);
    await t.sql.run('DELETE FROM drizzle.__drizzle_migrations WHERE created_at = ?', newest);
    clock += 1_000;
    const answer = await get(t, '/readyz');
    expect(answer.status).toBe(503);
    expect(answer.body.checks).toEqual({ database: 'ok', migrations: 'fail', redis: 'ok', shutdown: 'ok' });
    await t.sql.run('INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES (?, ?)', row!.hash, row!.created_at);
  });
});
