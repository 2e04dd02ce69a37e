import { describe, expect, it } from 'vitest';
import { bearer, type TestApp, useTestApp } from '../support/testApp.js';

let t: TestApp;
useTestApp((app) => {
  t = app;
});
const get = (path: string, key = t.fixture.portfolio.apiKey) => t.client.get(path, bearer(key));

// Paging, its parameters and the refusals every authenticated list shares are the shared suites' (test/shared/portfolio*.test.ts).
describe('GET /api/v1/testimonials', () => {
  it('answers 200 with quotes and their authors, an avatar as a whole asset or null', async () => {
    const response = await get('/api/v1/testimonials');
    expect(response.status).toBe(200);
    const testimonials = response.body.items as { quote: string; authorName: string; avatar: { id: string; url: string } | null }[];
    expect(testimonials.length).toBeGreaterThan(0);
    expect(testimonials.every((testimonial) => testimonial.quote.length > 0 && testimonial.authorName.length > 0)).toBe(true);
    expect(testimonials.map((testimonial) => testimonial.avatar)).toContain(null);
    for (const { avatar } of testimonials) if (avatar !== null) expect(avatar).toMatchObject({ id: expect.stringMatching(/^ast_/), url: expect.stringMatching(/^https:\/\//) });
  });

  it('answers 200 with an empty page to a tenant that has no testimonials', async () => {
    const response = await get('/api/v1/testimonials', t.fixture.portfolio.otherTenantApiKey);
    expect(response.status).toBe(200);
    expect(response.body.items).toEqual([]);
    expect(response.body.paging.total).toBe(0);
  });
});
