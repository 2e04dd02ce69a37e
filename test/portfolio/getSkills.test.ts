import { describe, expect, it } from 'vitest';
import { bearer, type TestApp, useTestApp } from '../support/testApp.js';

let t: TestApp;
useTestApp((app) => {
  t = app;
});
const get = (path: string, key = t.fixture.portfolio.apiKey) => t.client.get(path, bearer(key));

// Paging, its parameters and the refusals every authenticated list shares are the shared suites' (test/shared/portfolio*.test.ts).
describe('GET /api/v1/skills', () => {
  it('answers 200 with every skill, tags always a list while category and level may be absent', async () => {
    const response = await get('/api/v1/skills?limit=100');
    expect(response.status).toBe(200);
    const skills = response.body.items as { id: string; category: string | null; level: string | null; tags: string[] }[];
    expect(skills.length).toBe(response.body.paging.total);
    expect(skills.every((skill) => skill.id.startsWith('skl_') && Array.isArray(skill.tags))).toBe(true);
    expect(skills.some((skill) => skill.category === null && skill.level === null)).toBe(true);
    expect(new Set(skills.map((skill) => skill.category).filter((category) => category !== null))).toEqual(new Set(['Design', 'Engineering', 'Tools']));
  });
});
