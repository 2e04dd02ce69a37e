import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseContract } from '../../src/contract/responseContract.js';
import { loadContractDocument } from '../support/contractClient.js';
import { contractOperations } from '../support/operations.js';
import { bearer, startTestApp, type TestApp } from '../support/testApp.js';

const operations = contractOperations('portfolio');
const contract = new ResponseContract(loadContractDocument('portfolio'));

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe.each(operations)('$template', (operation) => {
  it.each(['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'])('answers %s with 405, an ErrorEnvelope and Allow: GET', async (method) => {
    const response = await t.client.request(method, operation.examplePath, {
      headers: { ...bearer(t.fixture.portfolio.apiKey), 'content-type': 'application/json' },
      body: method === 'POST' || method === 'PUT' || method === 'PATCH' ? '{"title":"x"}' : undefined,
    });
    expect(response.status).toBe(405);
    expect(response.headers['allow']).toBe('GET');
    if (method !== 'HEAD') expect(response.body.error.code).toBe('method_not_allowed');
    // The 405 the build adds to every operation (x-conventions) is the answer the server gives.
    if (method !== 'HEAD') expect(contract.check(operation.operationId, response)).toEqual([]);
  });

  it('ignores a trailing slash', async () => {
    const response = await t.client.get(`${operation.examplePath}/`, bearer(t.fixture.portfolio.apiKey));
    expect(response.status).toBe(200);
  });
});

describe('unknown paths', () => {
  it.each(['/api', '/api/v1', '/api/v1/nope', '/api/v2/portfolio', '/api/v1/posts/a/b', '/favicon.ico'])(
    'answer %s with a 404 ErrorEnvelope, never a framework page',
    async (path) => {
      const response = await t.client.get(path);
      expect(response.status).toBe(404);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(response.body.error.code).toBe('not_found');
    },
  );
});

describe('request ids', () => {
  it('echoes a well-formed client request id and replaces a malformed one', async () => {
    const echoed = await t.client.get('/api/v1/profile', { ...bearer(t.fixture.portfolio.apiKey), 'x-request-id': 'client-42.abc' });
    expect(echoed.headers['x-request-id']).toBe('client-42.abc');
    const replaced = await t.client.get('/api/v1/profile', { 'x-request-id': 'bad id with spaces' });
    expect(replaced.headers['x-request-id']).toMatch(/^req_/);
    expect(replaced.body.error.requestId).toBe(replaced.headers['x-request-id']);
  });
});
