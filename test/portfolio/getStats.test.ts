import { describe, expect, it } from 'vitest';
import { bearer, type TestApp, useTestApp } from '../support/testApp.js';

let t: TestApp;
useTestApp((app) => {
  t = app;
});
const get = (path: string, key = t.fixture.portfolio.apiKey) => t.client.get(path, bearer(key));

// Paging, its parameters and the refusals every authenticated list shares are the shared suites' (test/shared/portfolio*.test.ts).
describe('GET /api/v1/stats', () => {
  it('answers 200 with numeric values, a unit only where the figure has one', async () => {
    const response = await get('/api/v1/stats');
    expect(response.status).toBe(200);
    const stats = response.body.items as { id: string; label: string; value: number; unit: string | null }[];
    expect(stats.length).toBeGreaterThan(0);
    expect(stats.every((stat) => stat.id.startsWith('sta_') && typeof stat.value === 'number')).toBe(true);
    expect(stats.map((stat) => stat.unit)).toContain(null);
    expect(stats.find((stat) => stat.id === 'sta_avaRating')).toMatchObject({ value: 4.8, unit: 'out of 5' });
  });
});
