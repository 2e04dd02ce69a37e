// What Node's HTTP parser refuses before any API sees the request comes back in the error shape
// of the API the path belongs to, over a real socket.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseContract } from '../../src/contract/responseContract.js';
import { componentSchemaValidator, loadContractDocument } from '../support/contractClient.js';
import { rawExchange } from '../support/rawExchange.js';
import { startTestApp, type TestApp } from '../support/testApp.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { HTTP_HEADERS_TIMEOUT_MS: '300', HTTP_REQUEST_TIMEOUT_MS: '600', HTTP_MAX_HEADER_BYTES: '4096' } });
});
afterAll(() => t?.close());

const isProblem = componentSchemaValidator('work-platform', 'Problem');
const isErrorEnvelope = componentSchemaValidator('portfolio', 'ErrorEnvelope');

/** `rawExchange` on the test server. */
const exchange = (chunks: string[]) => rawExchange(t.app.url, chunks);

const bigHeader = `x-padding: ${'p'.repeat(8_000)}\r\n`;

describe('errors answered before the pipeline', () => {
  it('431 for headers over the limit, as a problem under /v1 and an ErrorEnvelope under /api/v1', async () => {
    const workPlatform = await exchange([`GET /v1/tasks HTTP/1.1\r\nhost: x\r\n${bigHeader}\r\n`]);
    expect(workPlatform.status).toBe(431);
    expect(workPlatform.headers['content-type']).toBe('application/problem+json');
    expect(isProblem(workPlatform.body), JSON.stringify(isProblem.errors)).toBe(true);
    expect(workPlatform.body.type).toMatch(/\/request-header-fields-too-large$/);
    expect(workPlatform.body.requestId).toBe(workPlatform.headers['x-request-id']);

    const portfolio = await exchange([`GET /api/v1/portfolio HTTP/1.1\r\nhost: x\r\n${bigHeader}\r\n`]);
    expect(portfolio.status).toBe(431);
    expect(isErrorEnvelope(portfolio.body), JSON.stringify(isErrorEnvelope.errors)).toBe(true);
    expect(portfolio.body.error).toMatchObject({ code: 'headers_too_large', status: 431 });
  });

  // The build adds 431 to every operation (x-conventions): the answer is the one each operation declares.
  it.each([
    ['work-platform', 'GET', '/v1/tasks', 'listTasks'],
    ['work-platform', 'POST', '/v1/tasks', 'createTask'],
    ['work-platform', 'GET', '/v1/openapi.yaml', 'getOpenapiYaml'],
    ['portfolio', 'GET', '/api/v1/posts', 'getPosts'],
    ['portfolio', 'GET', '/api/v1/docs', 'getReferencePage'],
  ])('431 on %s %s %s is the answer the operation declares', async (api, method, path, operationId) => {
    const answer = await exchange([`${method} ${path} HTTP/1.1\r\nhost: x\r\n${bigHeader}\r\n`]);
    expect(answer.status).toBe(431);
    expect(new ResponseContract(loadContractDocument(api)).check(operationId, answer)).toEqual([]);
  });

  it('400 for a request that is not HTTP', async () => {
    const answer = await exchange(['GET /v1/tasks HTTP/1.1\r\nhost x\r\nbroken header line\r\n\r\n']);
    expect(answer.status).toBe(400);
    expect(isProblem(answer.body)).toBe(true);
    expect(answer.body).toMatchObject({ status: 400, code: 'malformed-request' });
  });

  it('408 and a closed connection for a client that sends its request head too slowly', async () => {
    // The head never ends: the server's configured headers timeout (300 ms) answers it.
    const answer = await exchange(['GET /api/v1/portfolio HTTP/1.1\r\nhost: x\r\nx-slow: a']);
    expect(answer.status).toBe(408);
    expect(answer.headers.connection).toBe('close');
    expect(isErrorEnvelope(answer.body)).toBe(true);
    expect(answer.body.error.code).toBe('request_timeout');
  });

  // A fresh connection whose head never ends: Node reports the timeout without the request line,
  // so the adapter reads the path from the first line the connection sent.
  it.each([
    ['work-platform', '/v1/tasks', 'listTasks'],
    ['work-platform', '/v1/tasks?limit=5', 'listTasks'],
    ['work-platform', '/v1/openapi.yaml', 'getOpenapiYaml'],
    ['portfolio', '/api/v1/posts', 'getPosts'],
  ])('408 on a fresh connection with an unfinished head is in the shape of %s (%s), as the operation declares', async (api, target, operationId) => {
    const answer = await exchange([`GET ${target} HTTP/1.1\r\nHost: x\r\n`]);
    expect(answer.status).toBe(408);
    expect(answer.headers.connection).toBe('close');
    expect(answer.headers['content-type']).toMatch(api === 'work-platform' ? /^application\/problem\+json$/ : /^application\/json/);
    expect(new ResponseContract(loadContractDocument(api)).check(operationId, answer)).toEqual([]);
  });

  it('408 on a fresh connection whose request line arrives in pieces is in the shape of its path', async () => {
    const answer = await rawExchange(t.app.url, ['GE', 'T /v1/ta', 'sks HTTP/1.1\r\nhost: x\r\n'], 20);
    expect(answer.status).toBe(408);
    expect(isProblem(answer.body), JSON.stringify(isProblem.errors)).toBe(true);
    expect(answer.body.type).toMatch(/\/request-timeout$/);
  });

  // No path named, no API chosen: the neutral answer the specs describe is RFC 9457's problem+json.
  it.each([
    ['nothing at all', ['']],
    ['half a request line', ['GET /api/v1/po']],
  ])('408 on a fresh connection that sent %s is a problem (the neutral shape)', async (_case, chunks) => {
    const answer = await exchange(chunks);
    expect(answer.status).toBe(408);
    expect(answer.headers['content-type']).toBe('application/problem+json');
    expect(isProblem(answer.body), JSON.stringify(isProblem.errors)).toBe(true);
    expect(answer.body).toMatchObject({ status: 408, requestId: answer.headers['x-request-id'] });
    expect(answer.body.type).toMatch(/\/request-timeout$/);
  });
});
