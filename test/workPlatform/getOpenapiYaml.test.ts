import jsYaml from 'js-yaml';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import type { ContractClient } from '../support/contractClient.js';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { expectProblem } from '../support/workPlatform.js';

let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, client, fx } = app), { liftCallLimits: true });

describe('GET /v1/openapi.yaml', () => {
  it('answers 200 without a credential, as application/yaml, the same document as openapi.json', async () => {
    const yaml = await client.get('/v1/openapi.yaml');
    expect(yaml.status).toBe(200);
    expect(yaml.headers['content-type']).toMatch(/^application\/yaml/);
    const json = await client.get('/v1/openapi.json');
    expect(YAML.parse(yaml.text)).toEqual(json.body);
    // js-yaml reads an unquoted date as a Date: the served YAML quotes every string a loader would retype.
    expect(jsYaml.load(yaml.text)).toEqual(json.body);
    expect(yaml.text).toContain(`url: ${t.app.publicBaseUrl}\n`);
  });

  it('answers 405 method-not-allowed with Allow: GET to a POST, and 403 to a blocked Origin', async () => {
    const posted = await client.request('POST', '/v1/openapi.yaml', { headers: { 'content-type': 'application/json' }, body: '{}' });
    expectProblem(posted, 405, 'method-not-allowed');
    expect(posted.headers['allow']).toBe('GET');
    expectProblem(await client.get('/v1/openapi.yaml', { origin: 'https://evil.example', authorization: `Bearer ${fx.tokens.all}` }), 403, 'forbidden', 'origin-not-allowed');
  });
});
