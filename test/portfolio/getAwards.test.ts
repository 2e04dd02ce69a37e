import { describe, expect, it } from 'vitest';
import { bearer, type TestApp, useTestApp } from '../support/testApp.js';

let t: TestApp;
useTestApp((app) => {
  t = app;
});
const get = (path: string, key = t.fixture.portfolio.apiKey) => t.client.get(path, bearer(key));

// Paging, its parameters and the refusals every authenticated list shares are the shared suites' (test/shared/portfolio*.test.ts).
describe('GET /api/v1/awards', () => {
  it('answers 200 with dated awards, each url absent or http(s)', async () => {
    const response = await get('/api/v1/awards');
    expect(response.status).toBe(200);
    const awards = response.body.items as { awardedOn: string; url: string | null }[];
    expect(awards.length).toBeGreaterThan(0);
    for (const award of awards) {
      expect(award.awardedOn).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(award.url === null || /^https?:\/\//.test(award.url)).toBe(true);
    }
  });

  it('answers 200 with an empty page to a tenant that has no awards', async () => {
    const response = await get('/api/v1/awards', t.fixture.portfolio.otherTenantApiKey);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ items: [], paging: { limit: 20, offset: 0, total: 0, hasMore: false, nextOffset: null } });
  });

  it('answers 404 not_found to a tenant whose portfolio is unpublished', async () => {
    const response = await get('/api/v1/awards', t.fixture.portfolio.unpublishedApiKey);
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('not_found');
  });
});
