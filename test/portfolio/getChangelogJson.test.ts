import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { loadContractDocument } from '../support/contractClient.js';
import { type TestApp, useTestApp } from '../support/testApp.js';

let t: TestApp;
useTestApp((app) => {
  t = app;
});

const changelog = YAML.parse(readFileSync(new URL('../../specs/portfolio/changelog.yaml', import.meta.url), 'utf8')) as { entries: unknown[] };

describe('GET /api/v1/changelog.json', () => {
  it('answers 200 without a credential, uncounted: every entry of specs/portfolio/changelog.yaml with the current info.version', async () => {
    const response = await t.client.get('/api/v1/changelog.json');
    expect(response.status).toBe(200);
    expect(response.headers['x-ratelimit-limit']).toBeUndefined();
    expect(response.headers['cache-control']).toBe('public, max-age=300');
    const info = loadContractDocument('portfolio').info as { title: string; version: string };
    expect(response.body).toMatchObject({ api: info.title, version: info.version });
    expect(response.body.entries).toEqual(changelog.entries);
  });

  it('answers 405 method_not_allowed with Allow: GET to a POST', async () => {
    const response = await t.client.request('POST', '/api/v1/changelog.json', { headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(response.status).toBe(405);
    expect(response.headers['allow']).toBe('GET');
    expect(response.body.error.code).toBe('method_not_allowed');
  });
});
