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
describe('GET /api/v1/pages', () => {
  it('lists published pages but none of the unpublished ones', async () => {
    const slugs = (await get('/api/v1/pages?limit=100')).body.items.map((item: { slug: string }) => item.slug);
    expect(slugs).toEqual(expect.arrayContaining(t.fixture.portfolio.published.pages));
    for (const unpublished of t.fixture.portfolio.unpublished.pages) expect(slugs).not.toContain(unpublished);
  });

  it('answers 200 with page summaries (slug, title, description) and no blocks', async () => {
    const response = await get('/api/v1/pages');
    expect(response.status).toBe(200);
    for (const page of response.body.items) expect(Object.keys(page).sort()).toEqual(['description', 'slug', 'title']);
  });
});
