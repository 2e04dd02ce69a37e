// The adapter's rules hold on every surface of the server, each answering in its own error shape:
// /v1 (problem+json), /api/v1 (ErrorEnvelope), /v1/mcp (problem+json, or JSON-RPC for what is a
// JSON-RPC request's fault) and /oauth (the OAuth RFCs' {error, error_description}). Real HTTP on
// port 0; raw sockets where Node's own parser must see the bad input.
import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { ResponseContract } from '../../src/contract/responseContract.js';
import { MAX_JSON_DEPTH, nestsDeeperThan, topLevelScalar } from '../../src/http/jsonNesting.js';
import { answerPerJsonRpc } from '../../src/mcp/mcpServer.js';
import { componentSchemaValidator, loadContractDocument } from '../support/contractClient.js';
import { rawExchange } from '../support/rawExchange.js';
import { memoryLogger, type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';

let t: TestApp;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, fx } = app), { liftCallLimits: true, env: { HTTP_HEADERS_TIMEOUT_MS: '300', HTTP_REQUEST_TIMEOUT_MS: '600', HTTP_MAX_HEADER_BYTES: '4096' } });

const isProblem = componentSchemaValidator('work-platform', 'Problem');
const isErrorEnvelope = componentSchemaValidator('portfolio', 'ErrorEnvelope');
const workPlatformContract = new ResponseContract(loadContractDocument('work-platform'));
const portfolioContract = new ResponseContract(loadContractDocument('portfolio'));

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: any;
}

/** The OAuth error shape (RFC 6749 §5.2) as the authorization server answers it. */
function expectOauthError(answer: Answer, status: number): void {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  expect(answer.body).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
}

/** `rawExchange` on the test server. */
const exchange = (chunks: string[], pauseMs = 0) => rawExchange(t.app.url, chunks, pauseMs);

/** A request through node:http with the headers given as a list, so that a name may repeat. */
function send(method: string, path: string, headers: [string, string][], body?: string): Promise<Answer> {
  const url = new URL(path, t.app.url);
  return new Promise((resolve, reject) => {
    // Headers given as a list replace Node's defaults, Host included.
    const list = [['host', url.host], ...headers].flat();
    const request = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method, headers: list as unknown as Record<string, string> }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => {
        const contentType = String(response.headers['content-type'] ?? '');
        resolve({ status: response.statusCode!, headers: response.headers as Record<string, string>, body: text && contentType.includes('json') ? JSON.parse(text) : text });
      });
    });
    request.on('error', reject);
    request.end(body);
  });
}

/** The problem `expected` (from /v1) in every byte but its request id, which names the answer's own request. */
function expectSameProblem(answer: Answer, expected: Answer): void {
  expect(answer.status).toBe(expected.status);
  expect(answer.headers['content-type']).toBe(expected.headers['content-type']);
  expect(isProblem(answer.body)).toBe(true);
  expect(answer.body.requestId).toBe(answer.headers['x-request-id']);
  expect({ ...answer.body, requestId: undefined }).toEqual({ ...expected.body, requestId: undefined });
}

/** A JSON value nested `depth` levels of arrays and objects deep, as text. */
const nested = (depth: number, inner = '1') => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;
const mcpHeaders = (): [string, string][] => [['content-type', 'application/json'], ['accept', 'application/json, text/event-stream'], ['authorization', `Bearer ${fx.tokens.all}`]];
const FORM = 'application/x-www-form-urlencoded';

describe('the JSON nesting scan', () => {
  it('counts arrays and objects outside strings, without recursion, at any depth', () => {
    const bytes = (text: string) => Buffer.from(text);
    expect(nestsDeeperThan(bytes(nested(MAX_JSON_DEPTH)), MAX_JSON_DEPTH)).toBe(false);
    expect(nestsDeeperThan(bytes(nested(MAX_JSON_DEPTH + 1)), MAX_JSON_DEPTH)).toBe(true);
    expect(nestsDeeperThan(bytes(`{"a":"${'['.repeat(500)}\\"${'{'.repeat(500)}"}`), MAX_JSON_DEPTH)).toBe(false);
    expect(nestsDeeperThan(bytes('['.repeat(1024 * 1024)), MAX_JSON_DEPTH)).toBe(true);
    expect(topLevelScalar(`{"jsonrpc":"2.0","params":{"id":"inner","x":${nested(5000)}},"id":"r-1"}`, 'id')).toBe('r-1');
    expect(topLevelScalar(`{ "id" : 7 , "params": ${nested(5000)} }`, 'id')).toBe(7);
    expect(topLevelScalar(nested(10), 'id')).toBeUndefined();
  });
});

describe('two Authorization headers are refused on every surface', () => {
  const twice = (): [string, string][] => [['authorization', `Bearer ${fx.tokens.all}`], ['authorization', `Bearer ${fx.tokens.readOnly}`]];

  it('on /v1 and /api/v1 in their shapes, as declared', async () => {
    const workPlatform = await send('GET', '/v1/tasks', twice());
    expect(workPlatform.status).toBe(400);
    expect(workPlatform.body).toMatchObject({ code: 'duplicate-authorization' });
    expect(workPlatformContract.check('listTasks', workPlatform)).toEqual([]);
    const portfolio = await send('GET', '/api/v1/portfolio', twice());
    expect(portfolio.status).toBe(400);
    expect(portfolioContract.check('getPortfolio', portfolio)).toEqual([]);
  });

  it('on /v1/mcp as the same problem as on /v1', async () => {
    const onMcp = await send('POST', '/v1/mcp', [...mcpHeaders(), ['authorization', 'Bearer other']], JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
    const onApi = await send('POST', '/v1/tasks', [['content-type', 'application/json'], ...twice()], JSON.stringify({ projectId: fx.projectId, title: 'Two credentials' }));
    expect(workPlatformContract.check('createTask', onApi)).toEqual([]);
    expectSameProblem(onMcp, onApi);
    expect(onMcp.body).toMatchObject({ status: 400, code: 'duplicate-authorization' });
  });

  it.each(['/oauth/token', '/oauth/introspect', '/oauth/revoke'])('on %s in the OAuth error shape, before the client is read', async (path) => {
    const basic = `Basic ${Buffer.from('ocl_a:secret').toString('base64')}`;
    const answer = await send('POST', path, [['content-type', FORM], ['authorization', basic], ['authorization', basic]], 'grant_type=refresh_token&refresh_token=x&token=x');
    expectOauthError(answer, 400);
    expect(answer.body.error_description).toMatch(/more than one Authorization header/);
    expect(answer.headers['x-request-id']).toMatch(/^req_/);
  });
});

describe('a body over 1 MiB', () => {
  it('is the same 413 problem on /v1/mcp as on /v1, whatever its media type', async () => {
    const title = 'x'.repeat(1024 * 1024);
    const onApi = await send('POST', '/v1/tasks', [['content-type', 'application/json'], ['authorization', `Bearer ${fx.tokens.all}`]], JSON.stringify({ projectId: fx.projectId, title }));
    expect(onApi.status).toBe(413);
    expect(workPlatformContract.check('createTask', onApi)).toEqual([]);
    const toolCall = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'createTask', arguments: { body: { projectId: fx.projectId, title } } } });
    expectSameProblem(await send('POST', '/v1/mcp', mcpHeaders(), toolCall), onApi);
    const asText = mcpHeaders().map(([name, value]): [string, string] => (name === 'content-type' ? [name, 'text/plain'] : [name, value]));
    expectSameProblem(await send('POST', '/v1/mcp', asText, `${title}!`), onApi);
  });
});

describe(`a JSON body nested deeper than ${MAX_JSON_DEPTH} levels is refused on every surface`, () => {
  it('on /v1: 400 json-too-deep, as the operation declares; at the limit the body is read as usual', async () => {
    const headers: [string, string][] = [['content-type', 'application/json'], ['authorization', `Bearer ${fx.tokens.all}`]];
    const deep = await send('POST', '/v1/tasks', headers, `{"projectId":"${fx.projectId}","title":${nested(MAX_JSON_DEPTH)}}`);
    expect(deep.status).toBe(400);
    expect(deep.headers['content-type']).toBe('application/problem+json');
    expect(deep.body).toMatchObject({ code: 'json-too-deep' });
    expect(workPlatformContract.check('createTask', deep)).toEqual([]);
    const atTheLimit = await send('POST', '/v1/tasks', headers, `{"projectId":"${fx.projectId}","title":${nested(MAX_JSON_DEPTH - 1)}}`);
    expect(atTheLimit.status).toBe(422);
    expect(workPlatformContract.check('createTask', atTheLimit)).toEqual([]);
    const veryDeep = await send('PATCH', `/v1/tasks/${fx.taskIds[0]}`, [...headers, ['if-match', '1']], `{"title":${nested(5000)}}`);
    expect(veryDeep.body).toMatchObject({ status: 400, code: 'json-too-deep' });
  });

  it('on /v1/mcp: a tool argument 5,000 levels deep is JSON-RPC -32602 with the request id, and nothing runs', async () => {
    const body = `{"jsonrpc":"2.0","id":"deep-1","method":"tools/call","params":{"name":"createTask","arguments":{"body":{"projectId":"${fx.projectId}","title":${nested(5000)}}}}}`;
    const answer = await send('POST', '/v1/mcp', mcpHeaders(), body);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ jsonrpc: '2.0', id: 'deep-1', error: { code: -32602, message: expect.stringMatching(/nests deeper than 64 levels/) } });
    const withoutId = await send('POST', '/v1/mcp', mcpHeaders(), nested(100));
    expect(withoutId.status).toBe(400);
    expect(withoutId.body).toMatchObject({ id: null, error: { code: -32602 } });
  });

  it('on /oauth: 400 invalid_request in the OAuth shape', async () => {
    const answer = await send('POST', '/oauth/token', [['content-type', 'application/json']], `{"grant_type":${nested(5000, '"x"')}}`);
    expectOauthError(answer, 400);
    expect(answer.body.error_description).toMatch(/nests deeper than 64 levels/);
    const tooLarge = await send('POST', '/oauth/token', [['content-type', 'application/json']], `{"a":"${'x'.repeat(1024 * 1024)}"}`);
    expectOauthError(tooLarge, 413);
  });
});

describe("Node's own refusals come in the shape of the surface the path belongs to", () => {
  const bigHeader = `x-padding: ${'p'.repeat(8_000)}\r\n`;

  it('431 on /oauth in the OAuth shape, and on /v1/mcp as a problem', async () => {
    const oauth = await exchange([`POST /oauth/token HTTP/1.1\r\nhost: x\r\n${bigHeader}\r\n`]);
    expectOauthError(oauth, 431);
    expect(oauth.headers.connection).toBe('close');
    const mcp = await exchange([`POST /v1/mcp HTTP/1.1\r\nhost: x\r\n${bigHeader}\r\n`]);
    expect(mcp.status).toBe(431);
    expect(mcp.headers['content-type']).toBe('application/problem+json');
    expect(isProblem(mcp.body)).toBe(true);
  });

  it('400 for a request that is not HTTP, on /oauth in the OAuth shape', async () => {
    const answer = await exchange(['POST /oauth/token HTTP/1.1\r\nhost x\r\nbroken header line\r\n\r\n']);
    expectOauthError(answer, 400);
  });

  it('408 for a body that arrives too slowly, as a problem on /v1 and on /v1/mcp, as declared', async () => {
    const head = (path: string) => `POST ${path} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${fx.tokens.all}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: 200\r\n\r\n{"title":`;
    const rest = await exchange([head('/v1/tasks')]);
    expect(rest.status).toBe(408);
    expect(rest.headers['content-type']).toBe('application/problem+json');
    expect(rest.headers.connection).toBe('close');
    expect(rest.body.type).toMatch(/\/request-timeout$/);
    expect(workPlatformContract.check('createTask', rest)).toEqual([]);
    const mcp = await exchange([head('/v1/mcp')]);
    expect(mcp.status).toBe(408);
    expect(isProblem(mcp.body)).toBe(true);
  });

  it('408 for an unfinished head on a fresh connection: in the OAuth shape on /oauth, a problem on /v1/mcp', async () => {
    const oauth = await exchange(['POST /oauth/token HTTP/1.1\r\nhost: x\r\n']);
    expectOauthError(oauth, 408);
    expect(oauth.headers.connection).toBe('close');
    const mcp = await exchange(['POST /v1/mcp HTTP/1.1\r\nhost: x\r\n']);
    expect(mcp.status).toBe(408);
    expect(mcp.headers['content-type']).toBe('application/problem+json');
    expect(isProblem(mcp.body)).toBe(true);
  });

  it('408 for a head that arrives too slowly on a kept-alive connection, in the shape of the path it last asked for', async () => {
    const workPlatform = await exchange(['GET /v1/openapi.json HTTP/1.1\r\nhost: x\r\n\r\n', 'GET /v1/tasks HTTP/1.1\r\nhost: x\r\nx-slow: a'], 100);
    expect(workPlatform.answers).toBe(2);
    expect(workPlatform.status).toBe(408);
    expect(workPlatform.headers['content-type']).toBe('application/problem+json');
    expect(workPlatformContract.check('listTasks', workPlatform)).toEqual([]);
    const portfolio = await exchange(['GET /api/v1/openapi.json HTTP/1.1\r\nhost: x\r\n\r\n', 'GET /api/v1/posts HTTP/1.1\r\nhost: x\r\nx-slow: a'], 100);
    expect(portfolio.status).toBe(408);
    expect(isErrorEnvelope(portfolio.body)).toBe(true);
    expect(portfolioContract.check('getPosts', portfolio)).toEqual([]);
  });
});

describe('MCP answers per JSON-RPC', () => {
  const call = (params: unknown, id: unknown = 'p-1') => send('POST', '/v1/mcp', mcpHeaders(), JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params }));

  it.each([
    ['arguments as an array', { name: 'listTasks', arguments: [] }],
    ['arguments as null', { name: 'listTasks', arguments: null }],
    ['no name', { arguments: {} }],
    ['a name that is not a string', { name: 42, arguments: {} }],
  ])('%s: -32602 with a short message, not a schema report', async (_case, params) => {
    const answer = await call(params);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ jsonrpc: '2.0', id: 'p-1', error: { code: -32602 } });
    const message: string = answer.body.error.message;
    expect(message.length).toBeLessThan(200);
    expect(message).not.toMatch(/[\n{]|"code"/);
    expect(message).toMatch(/^Invalid params of tools\/call: /);
  });

  it('a failure of the server is -32603, quoting the HTTP request id, and logged with both ids', async () => {
    const { Server } = await import('@modelcontextprotocol/sdk/server/index.js');
    const { ListToolsRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
    const server = new Server({ name: 'test', version: '1' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => {
      throw new TypeError('cannot read properties of undefined');
    });
    const lines: string[] = [];
    answerPerJsonRpc(server, 'req_mcp-fault', memoryLogger(lines));
    const handler = (server as unknown as { _requestHandlers: Map<string, (request: unknown, extra: unknown) => Promise<unknown>> })._requestHandlers.get('tools/list')!;
    const error = await handler({ jsonrpc: '2.0', id: 9, method: 'tools/list' }, { requestId: 9 }).then(() => undefined, (thrown: unknown) => thrown);
    expect(error).toMatchObject({ code: -32603, message: 'Internal error; quote req_mcp-fault.' });
    const logged = lines.map((line) => JSON.parse(line)).find((line) => line.msg === 'mcp internal error' || line.message === 'mcp internal error');
    expect(logged).toMatchObject({ requestId: 'req_mcp-fault', jsonRpcId: 9, method: 'tools/list' });
  });
});
