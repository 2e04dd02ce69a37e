import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/auth/apiKeys.js';
import { createApiKeyStore } from '../../src/store/apiKeys.js';
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
