import { describe, expect, it } from 'vitest';
import { bearer, type TestApp, useTestApp } from '../support/testApp.js';

let t: TestApp;
useTestApp((app) => {
  t = app;
});

describe('getPortfolio', () => {
  it('returns the whole published document with every resource kind', async () => {
    const response = await t.client.get('/api/v1/portfolio', bearer(t.fixture.portfolio.apiKey));
    expect(response.status).toBe(200);
    for (const member of ['outcomes', 'posts', 'pages', 'experience', 'skills', 'stats', 'awards', 'education', 'testimonials', 'links']) {
      expect(response.body[member].length, member).toBeGreaterThan(0);
    }
    expect(response.body.profile.name).toEqual(expect.any(String));
    const kinds = new Set(response.body.education.map((credential: { kind: string }) => credential.kind));
    expect([...kinds].sort()).toEqual(['certification', 'education']);
    expect(response.body.skills.every((skill: { tags: unknown }) => Array.isArray(skill.tags))).toBe(true);
  });

  it('carries the rate-limit and request-id headers on every 200', async () => {
    const response = await t.client.get('/api/v1/portfolio', bearer(t.fixture.portfolio.apiKey));
    expect(Number(response.headers['x-ratelimit-limit'])).toBeGreaterThan(0);
    expect(Number(response.headers['x-ratelimit-remaining'])).toBeGreaterThanOrEqual(0);
    expect(Number(response.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000 - 1);
    expect(response.headers['x-request-id']).toMatch(/^req_[0-9a-f]{24}$/);
  });
});
