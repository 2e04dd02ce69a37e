import { describe, expect, it } from 'vitest';
import { contractOperations } from '../support/operations.js';
import { bearer, type TestApp, useTestApp } from '../support/testApp.js';

const lists = contractOperations('portfolio').filter((operation) => operation.isList);

/** Which member of the whole portfolio document holds each list's items, in display order. */
const documentMember: Record<string, string> = {
  getOutcomes: 'outcomes',
  getPosts: 'posts',
  getPages: 'pages',
  getExperience: 'experience',
  getSkills: 'skills',
  getStats: 'stats',
  getAwards: 'awards',
  getEducation: 'education',
  getTestimonials: 'testimonials',
  getLinks: 'links',
};

let t: TestApp;
let portfolio: Record<string, unknown[]>;
const get = (path: string) => t.client.get(path, bearer(t.fixture.portfolio.apiKey));

useTestApp(async (app) => {
  t = app;
  portfolio = (await get('/api/v1/portfolio')).body;
});

it('covers every list operation of the contract', () => {
  expect(lists.map((operation) => operation.operationId).sort()).toEqual(Object.keys(documentMember).sort());
});

describe.each(lists)('$operationId', (operation) => {
  const path = operation.examplePath;
  const expectedItems = () => {
    const items = portfolio[documentMember[operation.operationId]!]!;
    // The page list carries summaries; the whole document carries the pages with their blocks.
    return operation.operationId === 'getPages'
      ? items.map((page: any) => ({ slug: page.slug, title: page.title, description: page.description }))
      : items;
  };

  it('defaults to limit 20, offset 0 and reports the total', async () => {
    const response = await get(path);
    expect(response.status).toBe(200);
    const total = expectedItems().length;
    expect(total).toBeGreaterThan(0);
    expect(response.body.paging).toEqual({
      limit: 20,
      offset: 0,
      total,
      hasMore: total > 20,
      nextOffset: total > 20 ? 20 : null,
    });
    expect(response.body.items).toEqual(expectedItems().slice(0, 20));
  });

  it('pages through every published item in display order, one at a time', async () => {
    const seen: unknown[] = [];
    let offset: number | null = 0;
    while (offset !== null) {
      const response = await get(`${path}?limit=1&offset=${offset}`);
      expect(response.body.items.length).toBeLessThanOrEqual(1);
      seen.push(...response.body.items);
      offset = response.body.paging.nextOffset;
    }
    expect(seen).toEqual(expectedItems());
  });

  it('answers an offset at or beyond the total with an empty page', async () => {
    const total = expectedItems().length;
    for (const offset of [total, total + 50]) {
      const response = await get(`${path}?offset=${offset}`);
      expect(response.status).toBe(200);
      expect(response.body.items).toEqual([]);
      expect(response.body.paging).toMatchObject({ offset, total, hasMore: false, nextOffset: null });
    }
  });

  it('accepts the bounds 1 and 100', async () => {
    const smallest = await get(`${path}?limit=1`);
    const largest = await get(`${path}?limit=100`);
    expect(smallest.body.items).toHaveLength(1);
    expect(largest.body.items).toEqual(expectedItems().slice(0, 100));
    expect(largest.body.paging.limit).toBe(100);
  });
});

describe('published items only', () => {
  it('lists published outcomes and pages but none of the unpublished ones', async () => {
    for (const [kind, operationPath] of [
      ['outcomes', '/api/v1/outcomes?limit=100'],
      ['pages', '/api/v1/pages?limit=100'],
    ] as const) {
      const slugs = (await get(operationPath)).body.items.map((item: { slug: string }) => item.slug);
      expect(slugs).toEqual(expect.arrayContaining(t.fixture.portfolio.published[kind]));
      for (const unpublished of t.fixture.portfolio.unpublished[kind]) expect(slugs).not.toContain(unpublished);
    }
  });
});
