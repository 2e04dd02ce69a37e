import { describe, expect, it } from 'vitest';
import { contractOperations } from '../support/operations.js';
import type { ContractClient } from '../support/contractClient.js';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { expectProblem } from '../support/workPlatform.js';

// Running the collection in newman against the server is the shared suite's (test/shared/postman.test.ts).
let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, client, fx } = app), { liftCallLimits: true });

describe('GET /v1/postman.json', () => {
  it('answers 200 without a credential: a Postman v2.1 collection with one request per operation (and three setup requests), the OAuth 2.0 auth sending bearerToken, and this server as baseUrl', async () => {
    const response = await client.get('/v1/postman.json');
    expect(response.status).toBe(200);
    const postman = response.body;
    expect(postman.info.schema).toBe('https://schema.getpostman.com/json/collection/v2.1.0/collection.json');
    expect(postman.auth.type).toBe('oauth2');
    expect(postman.auth.oauth2).toContainEqual(expect.objectContaining({ key: 'accessToken', value: '{{bearerToken}}' }));
    expect(postman.auth.oauth2).toContainEqual(expect.objectContaining({ key: 'accessTokenUrl', value: `${new URL(t.app.publicBaseUrl).origin}/oauth/token` }));
    expect(postman.variable).toContainEqual(expect.objectContaining({ key: 'oauthClientId', value: '' }));
    expect(postman.variable).toContainEqual(expect.objectContaining({ key: 'baseUrl', value: t.app.publicBaseUrl }));
    // One request per operation, and the setup requests of the contract lifecycle (a second send, a contract to sign and its send).
    const requests = postman.item.flatMap((folder: { item: unknown[] }) => folder.item);
    expect(requests).toHaveLength(contractOperations('work-platform').length + 3);
  });

  it('answers 403 forbidden to a blocked Origin', async () => {
    const refused = expectProblem(await client.get('/v1/postman.json', { origin: 'https://evil.example' }), 403, 'forbidden', 'origin-not-allowed');
    expect(refused.requestId).toEqual(expect.any(String));
    expect((await client.get('/v1/postman.json', { origin: fx.allowedOrigin })).status).toBe(200);
  });
});
