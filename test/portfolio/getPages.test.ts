import { describe, expect, it } from 'vitest';
import { bearer, type TestApp, useTestApp } from '../support/testApp.js';

let t: TestApp;
useTestApp((app) => {
  t = app;
});
const get = (path: string, key = t.fixture.portfolio.apiKey) => t.client.get(path, bearer(key));

// Paging, its parameters and the refusals every authenticated list shares are the shared suites' (test/shared/portfolio*.test.ts).
describe('GET /api/v1/pages', () => {
  it('answers 200 with page summaries (slug, title, description) and no blocks', async () => {
    const response = await get('/api/v1/pages');
    expect(response.status).toBe(200);
    for (const page of response.body.items) expect(Object.keys(page).sort()).toEqual(['description', 'slug', 'title']);
  });

  it('answers 400 invalid_parameter naming offset to a negative offset', async () => {
    const response = await get('/api/v1/pages?offset=-5');
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'invalid_parameter', details: [expect.objectContaining({ in: 'query', name: 'offset' })] });
  });
});
