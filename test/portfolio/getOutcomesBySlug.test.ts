import { describe, expect, it } from 'vitest';
import { bearer, type TestApp, useTestApp } from '../support/testApp.js';

let t: TestApp;
useTestApp((app) => {
  t = app;
});
const get = (path: string, key = t.fixture.portfolio.apiKey) => t.client.get(path, bearer(key));

// Every by-slug operation's shared cases (published, unpublished, odd slugs) are test/shared/portfolioBySlug.test.ts's.
describe('GET /api/v1/outcomes/{slug}', () => {
  it('answers 200 with the outcome the list shows under that slug, its metrics included', async () => {
    const [listed] = (await get('/api/v1/outcomes?limit=1')).body.items;
    const response = await get(`/api/v1/outcomes/${listed.slug}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual(listed);
    expect(response.body.metrics.length).toBeGreaterThan(0);
  });

  it("answers 404 not_found to the other tenant's key, and 401 without a key", async () => {
    const [slug] = t.fixture.portfolio.published.outcomes;
    const foreign = await get(`/api/v1/outcomes/${slug}`, t.fixture.portfolio.otherTenantApiKey);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('not_found');
    const anonymous = await t.client.get(`/api/v1/outcomes/${slug}`);
    expect(anonymous.status).toBe(401);
  });
});
