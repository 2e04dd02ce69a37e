import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { loadContractDocument, type ContractClient } from '../support/contractClient.js';
import { expectProblem } from '../support/workPlatform.js';
import { useTestApp, type WorkPlatformFixture } from '../support/testApp.js';

let client: ContractClient;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ client, fx } = app), { liftCallLimits: true });

const changelog = YAML.parse(readFileSync(new URL('../../specs/work-platform/changelog.yaml', import.meta.url), 'utf8')) as { entries: unknown[] };

describe('GET /v1/changelog.json', () => {
  it('answers 200 without a credential: every entry of specs/work-platform/changelog.yaml, oldest first, with the current info.version', async () => {
    const response = await client.get('/v1/changelog.json');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.headers['cache-control']).toBe('public, max-age=300');
    const info = loadContractDocument('work-platform').info as { title: string; version: string };
    expect(response.body).toMatchObject({ api: info.title, version: info.version });
    expect(response.body.entries).toEqual(changelog.entries);
    expect(response.body.entries.some((entry: { affectedOperations: string[] }) => entry.affectedOperations.includes('getChangelogJson'))).toBe(true);
  });

  it('answers 405 method-not-allowed with Allow: GET to a DELETE, and 403 to a blocked Origin', async () => {
    const deleted = await client.request('DELETE', '/v1/changelog.json', { headers: { authorization: `Bearer ${fx.tokens.all}` } });
    expectProblem(deleted, 405, 'method-not-allowed');
    expect(deleted.headers['allow']).toBe('GET');
    expectProblem(await client.get('/v1/changelog.json', { origin: 'https://evil.example' }), 403, 'forbidden', 'origin-not-allowed');
  });
});
