import { describe, expect, it } from 'vitest';
import { bearer, type TestApp, useTestApp } from '../support/testApp.js';

let t: TestApp;
useTestApp((app) => {
  t = app;
});

describe('getProfile', () => {
  it('returns name, headline, bio summary, location and avatar', async () => {
    const response = await t.client.get('/api/v1/profile', bearer(t.fixture.portfolio.apiKey));
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(['avatar', 'bioSummary', 'headline', 'location', 'name', 'updatedAt']);
  });

  it('serves each tenant its own profile', async () => {
    const mine = await t.client.get('/api/v1/profile', bearer(t.fixture.portfolio.apiKey));
    const theirs = await t.client.get('/api/v1/profile', bearer(t.fixture.portfolio.otherTenantApiKey));
    expect(mine.body.name).not.toBe(theirs.body.name);
  });
});
