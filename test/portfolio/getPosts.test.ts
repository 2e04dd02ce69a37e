import { describe, expect, it } from 'vitest';
import { bearer, type TestApp, useTestApp } from '../support/testApp.js';

let t: TestApp;
useTestApp((app) => {
  t = app;
});
const get = (path: string) => t.client.get(path, bearer(t.fixture.portfolio.apiKey));

describe('GET /api/v1/posts', () => {
  it('has enough published posts to page and none of the unpublished ones', async () => {
    const all = (await get('/api/v1/posts?limit=100')).body;
    const slugs = all.items.map((post: { slug: string }) => post.slug);
    expect(all.paging.total).toBeGreaterThan(20);
    expect(slugs).toEqual(expect.arrayContaining(t.fixture.portfolio.published.posts));
    for (const unpublished of t.fixture.portfolio.unpublished.posts) expect(slugs).not.toContain(unpublished);
    const secondPage = (await get('/api/v1/posts?limit=20&offset=20')).body;
    expect(secondPage.items).toEqual(all.items.slice(20, 40));
  });
});
