import { describe, expect, it } from 'vitest';
import { bearer, type TestApp, useTestApp } from '../support/testApp.js';

let t: TestApp;
useTestApp((app) => {
  t = app;
});
const get = (path: string, key = t.fixture.portfolio.apiKey) => t.client.get(path, bearer(key));

// Paging, its parameters and the refusals every authenticated list shares are the shared suites' (test/shared/portfolio*.test.ts).
describe('GET /api/v1/links', () => {
  it('answers 200 with links of the closed kinds, an email as mailto: and the others as https', async () => {
    const response = await get('/api/v1/links');
    expect(response.status).toBe(200);
    const links = response.body.items as { kind: string; url: string }[];
    expect(links.map((link) => link.kind)).toEqual(expect.arrayContaining(['website', 'email', 'github']));
    for (const link of links) expect(link.url, link.kind).toMatch(link.kind === 'email' ? /^mailto:/ : /^https:\/\//);
  });

  it('answers 401 unauthenticated to a key that was never issued', async () => {
    const response = await get('/api/v1/links', `pfk_${'A'.repeat(43)}`);
    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('unauthenticated');
  });
});
