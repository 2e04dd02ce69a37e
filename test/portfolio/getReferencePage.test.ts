import { describe, expect, it } from 'vitest';
import { operationSummaries, useReferenceBrowser } from '../support/referencePage.js';
import { type TestApp, useTestApp } from '../support/testApp.js';

let t: TestApp;
useTestApp((app) => {
  t = app;
});
const browser = useReferenceBrowser();

/** The error codes the contract's ErrorEnvelope declares. */
function errorCodes(document: Record<string, any>): string[] {
  return document.components.schemas.ErrorEnvelope.properties.error.properties.code.enum;
}

describe('GET /api/v1/docs', () => {
  it('answers 200 text/html without a credential, under a same-origin Content-Security-Policy, reading /api/v1/openapi.json', async () => {
    const page = await t.client.get('/api/v1/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toContain("script-src 'self';");
    expect(page.text).toContain('data-spec="/api/v1/openapi.json"');
    expect(page.text).not.toMatch(/<script>/);
  });

  it('renders in chromium from this server alone, with no console error or warning: every operation and error code is on the page', async () => {
    const rendered = await browser.render(new URL('/api/v1/docs', t.app.publicBaseUrl).href);
    expect(rendered.foreignRequests).toEqual([]);
    expect(rendered.errors).toEqual([]);
    expect(rendered.warnings).toEqual([]);
    expect(operationSummaries(t.client.document).filter(({ summary }) => !rendered.text.includes(summary))).toEqual([]);
    expect(operationSummaries(t.client.document).filter(({ operationId }) => !rendered.sectionIds.some((id) => id.endsWith(`/${operationId}`)))).toEqual([]);
    expect(errorCodes(t.client.document).filter((code) => !rendered.text.includes(code))).toEqual([]);
  });
});
