import { describe, expect, it } from 'vitest';
import { contractOperations } from '../support/operations.js';
import { bearer, type TestApp, useTestApp } from '../support/testApp.js';

/**
 * Every operation of the served contract that reads one item by slug (`/api/v1/<kind>/{slug}`):
 * the item is the whole document's member `<kind>`, and the demo fixture names its published and
 * unpublished slugs per kind.
 */
type Kind = keyof TestApp['fixture']['portfolio']['published'];
const kinds = contractOperations('portfolio')
  .filter((operation) => operation.pathParameters.includes('slug'))
  .map((operation) => {
    const kind = operation.template.split('/')[3] as Kind;
    return { operationId: operation.operationId, kind, member: kind };
  });

it('finds the by-slug operations in the contract', () => {
  expect(kinds.map(({ operationId }) => operationId)).toEqual(expect.arrayContaining(['getOutcomesBySlug', 'getPagesBySlug', 'getPostsBySlug']));
});

let t: TestApp;
let portfolio: Record<string, Array<{ slug: string }>>;
const get = (path: string) => t.client.get(path, bearer(t.fixture.portfolio.apiKey));

useTestApp(async (app) => {
  t = app;
  portfolio = (await get('/api/v1/portfolio')).body;
});

describe.each(kinds)('GET /api/v1/$kind/{slug}', ({ kind, member }) => {
  it('serves every published item exactly as the whole document has it', async () => {
    const published = t.fixture.portfolio.published[kind];
    expect(published.length).toBeGreaterThan(0);
    for (const slug of published) {
      const response = await get(`/api/v1/${kind}/${slug}`);
      expect(response.status, slug).toBe(200);
      expect(response.body).toEqual(portfolio[member]!.find((item) => item.slug === slug));
    }
  });

  it('answers an unpublished slug exactly as a missing one', async () => {
    const unpublished = t.fixture.portfolio.unpublished[kind];
    expect(unpublished.length).toBeGreaterThan(0);
    const missing = await get(`/api/v1/${kind}/this-slug-does-not-exist`);
    expect(missing.status).toBe(404);
    for (const slug of unpublished) {
      const response = await get(`/api/v1/${kind}/${slug}`);
      expect(response.status, slug).toBe(404);
      expect({ ...response.body.error, requestId: 'x' }).toEqual({ ...missing.body.error, requestId: 'x' });
      expect(Object.keys(response.headers).sort()).toEqual(Object.keys(missing.headers).sort());
    }
  });

  it('answers 404 for an odd, long or badly percent-encoded slug rather than failing', async () => {
    for (const slug of ['%2e%2e', 'a'.repeat(500), encodeURIComponent("' OR 1=1 --"), encodeURIComponent('ünïcode'), '%ZZ', '%', '%E0%A4%A']) {
      const response = await get(`/api/v1/${kind}/${slug}`);
      expect(response.status, slug).toBe(404);
    }
  });
});
