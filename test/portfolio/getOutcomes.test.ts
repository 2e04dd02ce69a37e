import { describe, expect, it } from 'vitest';
import { bearer, type TestApp, useTestApp } from '../support/testApp.js';

let t: TestApp;
useTestApp((app) => {
  t = app;
});
const get = (path: string, key = t.fixture.portfolio.apiKey) => t.client.get(path, bearer(key));

// Paging, its parameters and the refusals every authenticated list shares are the shared suites' (test/shared/portfolio*.test.ts).
describe('GET /api/v1/outcomes', () => {
  it('answers 200 with whole outcomes: client, metrics, body, cover image and tags', async () => {
    const response = await get('/api/v1/outcomes?limit=1');
    expect(response.status).toBe(200);
    expect(Object.keys(response.body.items[0]).sort()).toEqual(['bodyHtml', 'client', 'coverImage', 'metrics', 'slug', 'summary', 'tags', 'title']);
  });

  it("answers 404 not_found to a tenant whose portfolio is unpublished, never another tenant's outcomes", async () => {
    const response = await get('/api/v1/outcomes', t.fixture.portfolio.unpublishedApiKey);
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('not_found');
    expect(response.text).not.toContain(t.fixture.portfolio.published.outcomes[0]);
  });
});
