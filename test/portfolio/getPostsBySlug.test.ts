import { describe, expect, it } from 'vitest';
import { bearer, type TestApp, useTestApp } from '../support/testApp.js';

let t: TestApp;
useTestApp((app) => {
  t = app;
});

describe('tenant isolation by slug', () => {
  it("answers 404 for a slug that only the other tenant has, exactly as for a missing slug", async () => {
    const [otherSlug] = t.fixture.portfolio.otherTenantOnly.posts;
    expect(otherSlug).toBeTruthy();
    const foreign = await t.client.get(`/api/v1/posts/${otherSlug}`, bearer(t.fixture.portfolio.apiKey));
    const missing = await t.client.get('/api/v1/posts/no-such-post-anywhere', bearer(t.fixture.portfolio.apiKey));
    expect(foreign.status).toBe(404);
    expect({ ...foreign.body.error, requestId: '' }).toEqual({ ...missing.body.error, requestId: '' });
    const own = await t.client.get(`/api/v1/posts/${otherSlug}`, bearer(t.fixture.portfolio.otherTenantApiKey));
    expect(own.status).toBe(200);
  });
});
