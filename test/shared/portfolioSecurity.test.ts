import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractOperations } from '../support/operations.js';
import { bearer, startTestApp, type TestApp } from '../support/testApp.js';

/**
 * The shared security suite: derived from the contract's operation list, so every authenticated
 * operation, including one added later, is covered without editing this file.
 */
const authenticated = contractOperations('portfolio').filter((operation) => !operation.isPublic);

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe.each(authenticated)('$operationId ($method $examplePath)', (operation) => {
  const call = (headers: Record<string, string>) => t.client.request(operation.method, operation.examplePath, { headers });

  it('answers 200 with a valid key, uncacheable by shared proxies', async () => {
    const response = await call(bearer(t.fixture.portfolio.apiKey));
    expect(response.status).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers['vary']).toBe('Authorization');
  });

  it.each([
    ['no Authorization header', {}],
    ['an empty Authorization header', { authorization: '' }],
    ['the Basic scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['the key without a scheme', 'raw-key'],
    ['a garbage bearer token', { authorization: 'Bearer not-a-key' }],
    ['a well-formed key that does not exist', { authorization: `Bearer pfk_${'A'.repeat(43)}` }],
    ['a key with a character appended', 'appended'],
  ] as const)('answers 401 unauthenticated for %s', async (_case, headers) => {
    const sent =
      headers === 'raw-key'
        ? { authorization: t.fixture.portfolio.apiKey }
        : headers === 'appended'
          ? bearer(`${t.fixture.portfolio.apiKey}x`)
          : headers;
    const response = await call(sent);
    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('unauthenticated');
    expect(response.body.error.requestId).toBe(response.headers['x-request-id']);
    expect(response.headers['cache-control']).toBe('no-store');
  });

  it('answers 403 api_key_revoked for a revoked key', async () => {
    const response = await call(bearer(t.fixture.portfolio.revokedApiKey));
    expect(response.status).toBe(403);
    expect(response.body.error.code).toBe('api_key_revoked');
  });

  it('answers 403 api_key_expired for an expired key', async () => {
    const response = await call(bearer(t.fixture.portfolio.expiredApiKey));
    expect(response.status).toBe(403);
    expect(response.body.error.code).toBe('api_key_expired');
  });

  it('checks the key before the parameters', async () => {
    const path = operation.isList ? `${operation.examplePath}?limit=abc` : operation.examplePath;
    const response = await call({});
    const withBadQuery = await t.client.request(operation.method, path, {});
    expect(response.status).toBe(401);
    expect(withBadQuery.status).toBe(401);
  });

  it("never shows the other tenant's key this tenant's data", async () => {
    const mine = await call(bearer(t.fixture.portfolio.apiKey));
    const theirs = await call(bearer(t.fixture.portfolio.otherTenantApiKey));
    const myName = (await t.client.get('/api/v1/profile', bearer(t.fixture.portfolio.apiKey))).body.name as string;
    expect(theirs.body).not.toEqual(mine.body);
    expect(theirs.text).not.toContain(myName);
  });
});

describe('a tenant without a published portfolio', () => {
  const dataOperations = contractOperations('portfolio').filter((operation) => !operation.isPublic);

  it.each(dataOperations)('gets 404 from $operationId', async (operation) => {
    const response = await t.client.get(operation.examplePath, bearer(t.fixture.portfolio.unpublishedApiKey));
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('not_found');
  });
});

describe('tenant isolation', () => {
  it('lists no item of one tenant to the other', async () => {
    const lists = contractOperations('portfolio').filter((operation) => operation.isList).map((operation) => operation.examplePath);
    expect(lists.length).toBeGreaterThanOrEqual(10);
    for (const list of lists) {
      const identities = async (key: string) => {
        const page = (await t.client.get(`${list}?limit=100`, bearer(key))).body;
        expect(page.paging.total).toBe(page.items.length);
        // Slugs may coincide across tenants (both have an "about" page); whole items may not.
        return page.items.map((item: unknown) => JSON.stringify(item));
      };
      const mine = await identities(t.fixture.portfolio.apiKey);
      const theirs = await identities(t.fixture.portfolio.otherTenantApiKey);
      expect(mine.length, list).toBeGreaterThan(0);
      expect(mine.filter((identity: string) => theirs.includes(identity)), list).toEqual([]);
    }
  });
});

describe('secrets', () => {
  it('never writes an API key to the log', async () => {
    await t.client.get('/api/v1/profile', bearer(t.fixture.portfolio.apiKey));
    await t.client.get('/api/v1/profile', bearer(t.fixture.portfolio.revokedApiKey));
    const log = t.logLines.join('\n');
    const requestLine = t.logLines.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'request' && entry.path === '/api/v1/profile' && entry.status === 200);
    expect(requestLine).toMatchObject({ level: 'info', method: 'GET', path: '/api/v1/profile', operationId: 'getProfile' });
    expect(requestLine.requestId).toMatch(/^req_/);
    expect(requestLine.durationMs).toEqual(expect.any(Number));
    expect(log).not.toContain(t.fixture.portfolio.apiKey);
    expect(log).not.toContain(t.fixture.portfolio.revokedApiKey);
  });

  it('stores keys only as hashes', async () => {
    const rows = await t.sql.rows('SELECT * FROM api_keys');
    const stored = JSON.stringify(rows);
    expect(rows.length).toBeGreaterThan(0);
    expect(stored).not.toContain(t.fixture.portfolio.apiKey);
    expect(stored).not.toContain(t.fixture.portfolio.apiKey.slice(12));
  });
});
