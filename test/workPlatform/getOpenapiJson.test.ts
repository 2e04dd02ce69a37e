import { describe, expect, it } from 'vitest';
import { operationIds } from '../../generated/work-platform/rules.js';
import { loadContractDocument, type ContractClient } from '../support/contractClient.js';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { expectProblem } from '../support/workPlatform.js';

let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, client, fx } = app), { liftCallLimits: true });

describe('GET /v1/openapi.json', () => {
  it('answers 200 without a credential: the committed contract, naming this server (and its OAuth endpoints), with every operation', async () => {
    const response = await client.get('/v1/openapi.json');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    const { servers, ...served } = response.body;
    const { servers: _committedServers, ...committed } = loadContractDocument('work-platform');
    const origin = new URL(t.app.publicBaseUrl).origin;
    const flow = (committed as any).components.securitySchemes.oauth2.flows.authorizationCode;
    for (const member of ['authorizationUrl', 'tokenUrl', 'refreshUrl']) flow[member] = flow[member].replace('http://localhost:3000', origin);
    expect(served).toEqual(committed);
    expect(served.components.securitySchemes.oauth2.flows.authorizationCode.tokenUrl).toBe(`${origin}/oauth/token`);
    expect(servers).toEqual([expect.objectContaining({ url: t.app.publicBaseUrl })]);
    const servedOperationIds = Object.values(response.body.paths as Record<string, Record<string, { operationId: string }>>).flatMap((item) => Object.values(item).map((operation) => operation.operationId));
    expect(servedOperationIds.sort()).toEqual([...operationIds].sort());
  });

  it('answers 403 forbidden to a blocked Origin, and gives the allowed origin Access-Control-Allow-Origin', async () => {
    expectProblem(await client.get('/v1/openapi.json', { origin: 'https://evil.example' }), 403, 'forbidden', 'origin-not-allowed');
    const allowed = await client.get('/v1/openapi.json', { origin: fx.allowedOrigin });
    expect(allowed.headers['access-control-allow-origin']).toBe(fx.allowedOrigin);
  });
});
