import { describe, expect, it } from 'vitest';
import { bearer, type TestApp, useTestApp } from '../support/testApp.js';

let t: TestApp;
useTestApp((app) => {
  t = app;
});
const get = (path: string, key = t.fixture.portfolio.apiKey) => t.client.get(path, bearer(key));

// Paging, its parameters and the refusals every authenticated list shares are the shared suites' (test/shared/portfolio*.test.ts).
describe('GET /api/v1/education', () => {
  it('answers 200 with degrees and certifications, a certification possibly without a start date', async () => {
    const response = await get('/api/v1/education');
    expect(response.status).toBe(200);
    const credentials = response.body.items as { id: string; kind: string; startDate: string | null; endDate: string | null }[];
    expect([...new Set(credentials.map((credential) => credential.kind))].sort()).toEqual(['certification', 'education']);
    expect(credentials.every((credential) => credential.id.startsWith('crd_'))).toBe(true);
    expect(credentials.filter((credential) => credential.kind === 'education').every((credential) => credential.startDate !== null)).toBe(true);
    const page = await get('/api/v1/education?limit=1&offset=1');
    expect(page.body.items).toEqual([credentials[1]]);
  });

  it('answers 401 unauthenticated to a key without the Bearer scheme', async () => {
    const response = await t.client.get('/api/v1/education', { authorization: t.fixture.portfolio.apiKey });
    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('unauthenticated');
  });
});
