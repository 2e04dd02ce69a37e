import { describe, expect, it } from 'vitest';
import type { ContractClient } from '../support/contractClient.js';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { expectProblem } from '../support/workPlatform.js';

let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, client, fx } = app), { liftCallLimits: true });

describe('GET /v1/postman-environment.json', () => {
  it('answers 200 without a credential: baseUrl set to this server, bearerToken left empty as a secret to fill in', async () => {
    const response = await client.get('/v1/postman-environment.json');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    const environment = response.body;
    expect(environment.values.map((value: { key: string }) => value.key)).toEqual(['baseUrl', 'bearerToken']);
    expect(environment.values[0].value).toBe(t.app.publicBaseUrl);
    expect(environment.values[1].value).toBe('');
    expect(response.text).not.toContain(fx.tokens.all);
  });

  it('answers 405 method-not-allowed with Allow: GET to a DELETE, and 403 to a blocked Origin', async () => {
    const deleted = await client.request('DELETE', '/v1/postman-environment.json', { headers: { authorization: `Bearer ${fx.tokens.all}` } });
    expectProblem(deleted, 405, 'method-not-allowed');
    expect(deleted.headers['allow']).toBe('GET');
    expectProblem(await client.get('/v1/postman-environment.json', { origin: 'https://evil.example' }), 403, 'forbidden', 'origin-not-allowed');
  });
});
