import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, startTestApp, type TestApp } from '../support/testApp.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});
const get = (path: string, key = t.fixture.portfolio.apiKey) => t.client.get(path, bearer(key));

// Paging, its parameters and the refusals every authenticated list shares are the shared suites' (test/shared/portfolio*.test.ts).
describe('GET /api/v1/outcomes', () => {
  it('lists published outcomes but none of the unpublished ones', async () => {
    const slugs = (await get('/api/v1/outcomes?limit=100')).body.items.map((item: { slug: string }) => item.slug);
    expect(slugs).toEqual(expect.arrayContaining(t.fixture.portfolio.published.outcomes));
    for (const unpublished of t.fixture.portfolio.unpublished.outcomes) expect(slugs).not.toContain(unpublished);
  });

  it('answers 200 with whole outcomes: client, metrics, body, cover image and tags', async () => {
    const response = await get('/api/v1/outcomes?limit=1');
    expect(response.status).toBe(200);
    expect(Object.keys(response.body.items[0]).sort()).toEqual(['bodyHtml', 'client', 'coverImage', 'metrics', 'slug', 'summary', 'tags', 'title']);
  });
});
