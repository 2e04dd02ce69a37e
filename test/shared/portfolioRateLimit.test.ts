import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoData } from '../../src/demo/demoData.js';
import { issueApiKey } from '../../src/auth/apiKeys.js';
import { createApiKeyStore } from '../../src/store/apiKeys.js';
import { openDatabase } from '../../src/store/database.js';
import { ContractClient } from '../support/contractClient.js';
import { startServerProcess, stopServerProcesses } from '../support/serverProcess.js';
import { limitEngines, useRedisServer } from '../support/redisServer.js';
import { bearer, startTestApp, type TestApp } from '../support/testApp.js';

const redis = useRedisServer();

describe.each(limitEngines(redis))('rate limit with an injected clock ($engine)', ({ env }) => {
  const windowMs = 60_000;
  // 10 s into a window, so the window ends 50 s from "now".
  let clock = Math.floor(Date.now() / windowMs) * windowMs + 10_000;
  let t: TestApp;
  let key: string;
  let ownAllowanceKey: string;

  beforeAll(async () => {
    t = await startTestApp({ now: () => clock, env: env(), config: { portfolioRateLimit: 3, portfolioRateWindowSeconds: 60 } });
    const keys = createApiKeyStore(t.store, { now: () => clock });
    key = (await issueApiKey(keys, { tenantId: t.fixture.portfolio.tenantId })).key;
    ownAllowanceKey = (await issueApiKey(keys, { tenantId: t.fixture.portfolio.tenantId, rateLimit: 5 })).key;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('counts down, answers 429 with Retry-After in seconds, and restores the allowance in the next window', async () => {
    const windowEndSeconds = (clock - 10_000 + windowMs) / 1000;
    for (const remaining of [2, 1, 0]) {
      const response = await t.client.get('/api/v1/profile', bearer(key));
      expect(response.status).toBe(200);
      expect(response.headers['x-ratelimit-limit']).toBe('3');
      expect(response.headers['x-ratelimit-remaining']).toBe(String(remaining));
      expect(response.headers['x-ratelimit-reset']).toBe(String(windowEndSeconds));
    }
    const limited = await t.client.get('/api/v1/posts?limit=abc', bearer(key));
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
    expect(limited.headers['retry-after']).toBe('50');
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');

    clock += 49_000;
    expect((await t.client.get('/api/v1/profile', bearer(key))).headers['retry-after']).toBe('1');
    clock += 1_000;
    const nextWindow = await t.client.get('/api/v1/profile', bearer(key));
    expect(nextWindow.status).toBe(200);
    expect(nextWindow.headers['x-ratelimit-remaining']).toBe('2');
  });

  it("honours a key's own allowance and counts keys apart", async () => {
    for (let i = 0; i < 5; i++) expect((await t.client.get('/api/v1/profile', bearer(ownAllowanceKey))).status).toBe(200);
    const limited = await t.client.get('/api/v1/profile', bearer(ownAllowanceKey));
    expect(limited.status).toBe(429);
    expect(limited.headers['x-ratelimit-limit']).toBe('5');
    expect((await t.client.get('/api/v1/profile', bearer(t.fixture.portfolio.otherTenantApiKey))).status).toBe(200);
  });

  it('does not count the public downloads', async () => {
    const fresh = (await issueApiKey(createApiKeyStore(t.store, { now: () => clock }), { tenantId: t.fixture.portfolio.tenantId })).key;
    const before = await t.client.get('/api/v1/profile', bearer(fresh));
    for (const download of ['/api/v1/openapi.json', '/api/v1/openapi.yaml', '/api/v1/postman.json']) {
      const response = await t.client.get(download, bearer(fresh));
      expect(response.status).toBe(200);
      expect(response.headers['x-ratelimit-limit']).toBeUndefined();
    }
    const after = await t.client.get('/api/v1/profile', bearer(fresh));
    expect(Number(after.headers['x-ratelimit-remaining'])).toBe(Number(before.headers['x-ratelimit-remaining']) - 1);
  });
});

describe('rate limit shared by two server processes on one database', () => {
  const children: ChildProcess[] = [];
  let dataDir: string;
  let key: string;
  let clients: ContractClient[];

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'contract-api-ratelimit-'));
    const databasePath = path.join(dataDir, 'app.db');
    const db = openDatabase(databasePath);
    const fixture = await loadDemoData(db, Date.now);
    key = (await issueApiKey(createApiKeyStore(db), { tenantId: fixture.portfolio.tenantId, rateLimit: 6 })).key;
    db.close();
    // One window spans the whole test, so a window boundary cannot fall inside it.
    const env = { DATABASE_PATH: databasePath, PORTFOLIO_RATE_WINDOW_SECONDS: String(10 * 365 * 24 * 3600) };
    const servers = await Promise.all([startServerProcess(env), startServerProcess(env)]);
    children.push(...servers.map((server) => server.child));
    clients = servers.map((server) => new ContractClient(server.url));
  });

  afterAll(async () => {
    const codes = await stopServerProcesses(children);
    rmSync(dataDir, { recursive: true, force: true });
    // SIGTERM shuts a server down gracefully, with exit code 0.
    expect(codes).toEqual(codes.map(() => 0));
  });

  it('spends one allowance across both processes', async () => {
    const remaining: string[] = [];
    for (let i = 0; i < 6; i++) {
      const response = await clients[i % 2]!.get('/api/v1/profile', bearer(key));
      expect(response.status).toBe(200);
      remaining.push(response.headers['x-ratelimit-remaining']!);
    }
    expect(remaining).toEqual(['5', '4', '3', '2', '1', '0']);
    for (const client of clients) {
      const limited = await client.get('/api/v1/profile', bearer(key));
      expect(limited.status).toBe(429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    }
  });
});
