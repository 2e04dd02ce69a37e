import { describe, expect, it } from 'vitest';
import { PROBLEM_TYPES } from '../../src/workPlatform/problems.js';
import type { ContractClient } from '../support/contractClient.js';
import { operationSummaries, useReferenceBrowser } from '../support/referencePage.js';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { expectProblem } from '../support/workPlatform.js';

let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, client, fx } = app), { liftCallLimits: true });
const browser = useReferenceBrowser();

describe('GET /v1/docs', () => {
  it('answers 200 text/html without a credential: a page with no inline script, under a same-origin Content-Security-Policy', async () => {
    const page = await client.get('/v1/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toContain("script-src 'self';");
    expect(page.headers['content-security-policy']).toContain("connect-src 'self';");
    const scripts = [...page.text.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.map(([, attributes]) => /src="([^"]+)"/.exec(attributes!)?.[1])).toEqual(['/assets/redoc.standalone.js', '/assets/reference.js']);
    expect(scripts.every(([, , body]) => body === '')).toBe(true);
    expect(page.text).toContain('data-spec="/v1/openapi.json"');
  });

  it('serves the renderer from this server, cacheable, with a 304 for its ETag and 405 to anything but GET and HEAD', async () => {
    const renderer = await fetch(new URL('/assets/redoc.standalone.js', t.app.url));
    expect(renderer.status).toBe(200);
    expect(renderer.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect((await renderer.text()).length).toBeGreaterThan(500_000);
    const etag = renderer.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      expect((await fetch(new URL('/assets/redoc.standalone.js', t.app.url), { headers: { 'if-none-match': ifNoneMatch } })).status, ifNoneMatch).toBe(304);
    }
    expect((await fetch(new URL('/assets/redoc.standalone.js', t.app.url), { headers: { 'if-none-match': '"other"' } })).status).toBe(200);
    expect((await fetch(new URL('/assets/reference.js', t.app.url))).headers.get('etag')).not.toBe(etag);
    const posted = await fetch(new URL('/assets/reference.js', t.app.url), { method: 'POST' });
    expect(posted.status).toBe(405);
    expect(posted.headers.get('allow')).toBe('GET, HEAD');
  });

  it('answers 405 to a POST and 403 to a blocked Origin', async () => {
    expectProblem(await client.request('POST', '/v1/docs', { headers: { 'content-type': 'application/json' }, body: '{}' }), 405, 'method-not-allowed');
    expectProblem(await client.get('/v1/docs', { origin: 'https://evil.example', authorization: `Bearer ${fx.tokens.all}` }), 403, 'forbidden', 'origin-not-allowed');
  });

  it('renders in chromium from this server alone, with no console error or warning (Redoc warns about the document it renders): every operation, event and problem type is on the page', async () => {
    const rendered = await browser.render(new URL('/v1/docs', t.app.publicBaseUrl).href);
    expect(rendered.foreignRequests).toEqual([]);
    expect(rendered.errors).toEqual([]);
    expect(rendered.warnings).toEqual([]);
    expect(rendered.loaded).toContain(new URL('/v1/openapi.json', t.app.publicBaseUrl).href);
    const missing = operationSummaries(client.document).filter(({ summary }) => !rendered.text.includes(summary));
    expect(missing).toEqual([]);
    // Each operation and event has a section of its own, not only a mention in the description.
    const withoutSection = operationSummaries(client.document).filter(({ operationId }) => !rendered.sectionIds.some((id) => id.endsWith(`/${operationId}`)));
    expect(withoutSection).toEqual([]);
    const missingProblems = Object.entries(PROBLEM_TYPES).filter(([slug, { title }]) => !rendered.text.includes(slug) || !rendered.text.includes(title));
    expect(missingProblems).toEqual([]);
  });
});
