import { describe, expect, it } from 'vitest';
import { operationIds } from '../../generated/portfolio/rules.js';
import { loadContractDocument } from '../support/contractClient.js';
import { type TestApp, useTestApp } from '../support/testApp.js';

let t: TestApp;
useTestApp((app) => {
  t = app;
});

describe('GET /api/v1/openapi.json', () => {
  it('names this server as its base URL', async () => {
    const json = (await t.client.get('/api/v1/openapi.json')).body;
    expect(json.servers).toEqual([expect.objectContaining({ url: t.app.publicBaseUrl })]);
  });

  it('answers 200 without a credential, uncounted: the committed contract with every operation', async () => {
    const response = await t.client.get('/api/v1/openapi.json');
    expect(response.status).toBe(200);
    expect(response.headers['x-ratelimit-limit']).toBeUndefined();
    const { servers: _servers, ...served } = response.body;
    const { servers: _committedServers, ...committed } = loadContractDocument('portfolio');
    expect(served).toEqual(committed);
    const servedOperationIds = Object.values(response.body.paths as Record<string, Record<string, { operationId: string }>>).flatMap((item) => Object.values(item).map((operation) => operation.operationId));
    expect(servedOperationIds.sort()).toEqual([...operationIds].sort());
  });

  it('answers 405 method_not_allowed with Allow: GET to a POST', async () => {
    const response = await t.client.request('POST', '/api/v1/openapi.json', { headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(response.status).toBe(405);
    expect(response.headers['allow']).toBe('GET');
    expect(response.body.error.code).toBe('method_not_allowed');
  });
});
