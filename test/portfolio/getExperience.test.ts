import { describe, expect, it } from 'vitest';
import { bearer, type TestApp, useTestApp } from '../support/testApp.js';

let t: TestApp;
useTestApp((app) => {
  t = app;
});
const get = (path: string, key = t.fixture.portfolio.apiKey) => t.client.get(path, bearer(key));

// Paging, its parameters and the refusals every authenticated list shares are the shared suites' (test/shared/portfolio*.test.ts).
describe('GET /api/v1/experience', () => {
  it('answers 200 with the roles of the whole document, each with its highlights, none ending before it starts', async () => {
    const whole = (await get('/api/v1/portfolio')).body.experience;
    const response = await get('/api/v1/experience');
    expect(response.status).toBe(200);
    expect(response.body.items).toEqual(whole);
    expect(response.body.paging).toMatchObject({ total: whole.length, hasMore: false });
    for (const entry of response.body.items) {
      expect(Array.isArray(entry.highlights)).toBe(true);
      if (entry.endDate !== null) expect(entry.endDate >= entry.startDate, entry.id).toBe(true);
    }
  });

  it('answers 401 unauthenticated without a key', async () => {
    const response = await t.client.get('/api/v1/experience');
    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('unauthenticated');
  });
});
