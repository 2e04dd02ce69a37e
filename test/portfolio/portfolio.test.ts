import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractOperations } from '../support/operations.js';
import { bearer, startTestApp, type TestApp } from '../support/testApp.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe('getPortfolio', () => {
  it('returns the whole published document with every resource kind', async () => {
    const response = await t.client.get('/api/v1/portfolio', bearer(t.fixture.portfolio.apiKey));
    expect(response.status).toBe(200);
    for (const member of ['outcomes', 'posts', 'pages', 'experience', 'skills', 'stats', 'awards', 'education', 'testimonials', 'links']) {
      expect(response.body[member].length, member).toBeGreaterThan(0);
    }
    expect(response.body.profile.name).toEqual(expect.any(String));
    const kinds = new Set(response.body.education.map((credential: { kind: string }) => credential.kind));
    expect([...kinds].sort()).toEqual(['certification', 'education']);
    expect(response.body.skills.every((skill: { tags: unknown }) => Array.isArray(skill.tags))).toBe(true);
  });

  it('carries the rate-limit and request-id headers on every 200', async () => {
    const response = await t.client.get('/api/v1/portfolio', bearer(t.fixture.portfolio.apiKey));
    expect(Number(response.headers['x-ratelimit-limit'])).toBeGreaterThan(0);
    expect(Number(response.headers['x-ratelimit-remaining'])).toBeGreaterThanOrEqual(0);
    expect(Number(response.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000 - 1);
    expect(response.headers['x-request-id']).toMatch(/^req_[0-9a-f]{24}$/);
  });
});

describe('getProfile', () => {
  it('returns name, headline, bio summary, location and avatar', async () => {
    const response = await t.client.get('/api/v1/profile', bearer(t.fixture.portfolio.apiKey));
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(['avatar', 'bioSummary', 'headline', 'location', 'name', 'updatedAt']);
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

describe('request ids', () => {
  it('echoes a well-formed client request id and replaces a malformed one', async () => {
    const echoed = await t.client.get('/api/v1/profile', { ...bearer(t.fixture.portfolio.apiKey), 'x-request-id': 'client-42.abc' });
    expect(echoed.headers['x-request-id']).toBe('client-42.abc');
    const replaced = await t.client.get('/api/v1/profile', { 'x-request-id': 'bad id with spaces' });
    expect(replaced.headers['x-request-id']).toMatch(/^req_/);
    expect(replaced.body.error.requestId).toBe(replaced.headers['x-request-id']);
  });
});
