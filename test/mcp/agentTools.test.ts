// The agent tool server (MCP), driven by the SDK's own client over both transports against a real
// server: Streamable HTTP at /mcp, and stdio through `npm run mcp`'s relay in a child process.
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { createAjv2020 } from '../../src/contract/ajv.js';
import { readSpecOperations } from '../../src/contract/specOperations.js';
import { runSourceFile } from '../support/serverProcess.js';
import { npmScriptNodeArguments } from '../../scripts/npmScriptArguments.js';
import { scopeCatalogue } from '../../generated/work-platform/rules.js';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { loadContractDocument } from '../support/contractClient.js';
import { DEFAULT_PROBLEM_TYPE_BASE } from '../../src/workPlatform/problems.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

let t: TestApp;
let fx: WorkPlatformFixture;
/** Every bearer-token look-up the server made, by the Authorization header it looked up. */
const lookups: string[] = [];
useTestApp(({ workPlatform: app }) => ({ t, fx } = app), {
  liftCallLimits: true,
  wrapCallers: (callers) => ({
    resolve: (authorization) => {
      lookups.push(String(authorization));
      return callers.resolve(authorization);
    },
  }),
});

const clients: Client[] = [];
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
});

async function connectOverHttp(token: string): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/v1/mcp', t.app.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  clients.push(client);
  return client;
}

/** The tools a token with these scopes may call, read from the contract (its operations that are tools, whose every required scope is granted). */
function operationsAllowedTo(scopes: readonly string[]): string[] {
  return readSpecOperations(loadContractDocument('work-platform'))
    .flatMap(({ toolName, requiredScopes = [] }) => (toolName !== undefined && requiredScopes.every((scope) => scopes.includes(scope)) ? [toolName] : []))
    .sort();
}

const problemOf = (result: CallToolResult) => JSON.parse((result.content[0] as { text: string }).text);
const lineOf = (result: CallToolResult, header: string) =>
  result.content
    .flatMap((item) => (item.type === 'text' ? item.text.split('\n') : []))
    .find((line) => line.startsWith(`${header}: `))
    ?.slice(header.length + 2);

describe('MCP over Streamable HTTP (/v1/mcp)', () => {
  it('lists one tool per operation the token may call, named by operationId, with a self-contained input schema', async () => {
    const allScopes = await connectOverHttp(fx.tokens.all);
    const { tools } = await allScopes.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(operationsAllowedTo(scopeCatalogue));
    const ajv = createAjv2020();
    for (const tool of tools) {
      expect(JSON.stringify(tool.inputSchema), tool.name).not.toContain('"$ref"');
      expect(() => ajv.compile(tool.inputSchema), tool.name).not.toThrow();
      expect(tool.description, tool.name).toBeTruthy();
    }
    const getTask = tools.find((tool) => tool.name === 'getTask')!;
    expect(getTask.inputSchema.required).toEqual(['taskId']);
    expect(getTask.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    const annotationsOf = (name: string) => tools.find((tool) => tool.name === name)!.annotations;
    expect(annotationsOf('createTask')).toMatchObject({ readOnlyHint: false, destructiveHint: false, openWorldHint: false });
    expect(annotationsOf('updateTask')).toMatchObject({ destructiveHint: true });
    expect(annotationsOf('deleteTask')).toMatchObject({ destructiveHint: true, idempotentHint: true });
    expect(annotationsOf('importIssues')).toMatchObject({ destructiveHint: true, openWorldHint: true });
    expect(annotationsOf('draftTasks')).toMatchObject({ openWorldHint: true });
    const createTask = tools.find((tool) => tool.name === 'createTask')!;
    expect(Object.keys(createTask.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['Idempotency-Key', 'body']));
  });

  it("shows the limits to the agent: lengths, patterns and enums in the input schema, the operation's problem types in the description", async () => {
    const { tools } = await (await connectOverHttp(fx.tokens.all)).listTools();
    const tool = (name: string) => tools.find((candidate) => candidate.name === name)! as { description: string; inputSchema: any };
    expect(tool('createTask').inputSchema.properties.body.properties.title).toMatchObject({ minLength: 1, maxLength: 200 });
    expect(tool('createDeal').inputSchema.properties.body.properties.currency.enum).toEqual(expect.arrayContaining(['EUR', 'JPY']));
    expect(tool('createDeal').inputSchema.properties.body.properties.currency.enum).not.toContain('BTC');
    expect(tool('createContact').inputSchema.properties.body.properties.email.pattern).toMatch(/^\^/);
    expect(tool('createWebhook').inputSchema.properties.body.properties.url.pattern).toBe('^https://');
    expect(tool('createContract').inputSchema.properties.body.dependentRequired).toEqual({ amountMinor: ['currency'], currency: ['amountMinor'] });
    expect(tool('updateTask').inputSchema.properties['If-Match'].pattern).toBe('^(?:[0-9]{1,15}|"[0-9]{1,15}")$');
    expect(tool('listTasks').inputSchema.properties.cursor).toMatchObject({ maxLength: 4096, pattern: expect.any(String) });
    expect(tool('listTasks').description).toContain('validation (422)');
    expect(tool('updateContract').description).toMatch(/problem types.*conflict \(409\).*validation \(422\)/s);
    expect(tool('draftTasks').description).toContain('ai-spend-cap-exceeded (429)');
    expect(tool('getTask').description).not.toContain('validation (422)');
  });

  it('lists only what a tasks:read token may call', async () => {
    const readOnly = await connectOverHttp(fx.tokens.readOnly);
    const names = (await readOnly.listTools()).tools.map((tool) => tool.name).sort();
    expect(names).toEqual(operationsAllowedTo(['tasks:read']));
    expect(names).toContain('listTasks');
    expect(names).not.toContain('createTask');
  });

  it('calls a tool through the API: the answer is the body, as text and structured content', async () => {
    const client = await connectOverHttp(fx.tokens.all);
    const result = (await client.callTool({ name: 'listTasks', arguments: { limit: 2, sort: 'createdAt', order: 'asc' } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const page = result.structuredContent as { items: { id: string }[]; nextCursor: string | null };
    expect(page.items.map((task) => task.id)).toEqual(fx.taskIds.slice(0, 2));
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(page);
  });

  it('creates with a body, then updates with the ETag as If-Match; a stale one is a version-conflict tool error', async () => {
    const client = await connectOverHttp(fx.tokens.all);
    const created = (await client.callTool({ name: 'createTask', arguments: { body: { projectId: fx.projectId, title: 'Made by an agent' } } })) as CallToolResult;
    expect(created.isError).toBeFalsy();
    const task = created.structuredContent as { id: string; version: number; title: string };
    expect(task.title).toBe('Made by an agent');
    expect(lineOf(created, 'location')).toBe(`/v1/tasks/${task.id}`);
    const etag = lineOf(created, 'etag')!;
    const updated = (await client.callTool({ name: 'updateTask', arguments: { taskId: task.id, 'If-Match': etag, body: { title: 'Renamed by an agent' } } })) as CallToolResult;
    expect(updated.isError).toBeFalsy();
    expect((updated.structuredContent as { title: string }).title).toBe('Renamed by an agent');
    const stale = (await client.callTool({ name: 'updateTask', arguments: { taskId: task.id, 'If-Match': etag, body: { title: 'Lost update' } } })) as CallToolResult;
    expect(stale.isError).toBe(true);
    expect(problemOf(stale)).toMatchObject({ status: 409, code: 'version-conflict' });
  });

  it('answers a call the scopes do not allow with the API\'s insufficient-scope problem, naming the missing scope', async () => {
    const readOnly = await connectOverHttp(fx.tokens.readOnly);
    const refused = (await readOnly.callTool({ name: 'createTask', arguments: { body: { projectId: fx.projectId, title: 'Not allowed' } } })) as CallToolResult;
    expect(refused.isError).toBe(true);
    const problem = problemOf(refused);
    expect(problem).toMatchObject({ type: `${DEFAULT_PROBLEM_TYPE_BASE}/insufficient-scope`, status: 403, requiredScopes: ['tasks:write'], grantedScopes: ['tasks:read'] });
    expect(problem.requestId).toMatch(/^req_/);
  });

  it('answers invalid arguments as tool errors: a validation problem with its errors, an unknown argument, a missing path parameter', async () => {
    const client = await connectOverHttp(fx.tokens.all);
    const invalid = (await client.callTool({ name: 'createTask', arguments: { body: { projectId: fx.projectId } } })) as CallToolResult;
    expect(invalid.isError).toBe(true);
    const problem = problemOf(invalid);
    expect(problem.status).toBe(422);
    expect(problem.errors.map((issue: { path: string }) => issue.path)).toContain('/title');
    const unknown = (await client.callTool({ name: 'getTask', arguments: { taskId: fx.taskIds[0], verbose: true } })) as CallToolResult;
    expect(unknown).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringContaining('"verbose"') }] });
    const missing = (await client.callTool({ name: 'getTask', arguments: {} })) as CallToolResult;
    expect(missing).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringContaining('"taskId"') }] });
    const gone = (await client.callTool({ name: 'getTask', arguments: { taskId: 'tsk_ZZZZZZZZZZZZZZZZZZZZ' } })) as CallToolResult;
    expect(problemOf(gone)).toMatchObject({ status: 404, code: 'task-not-found' });
  });

  it('an unknown tool is a protocol error, worded once', async () => {
    const client = await connectOverHttp(fx.tokens.all);
    const error = await client.callTool({ name: 'launchRocket', arguments: {} }).then(() => undefined, (thrown: unknown) => thrown);
    expect(error).toMatchObject({ code: -32602, message: UNKNOWN_TOOL_MESSAGE });
  });

  it('refuses a request without a valid token with 401 problem+json and a WWW-Authenticate naming the resource metadata', async () => {
    for (const authorization of [undefined, `Bearer ${fx.tokens.revoked}`, 'Bearer nonsense']) {
      const response = await fetch(new URL('/v1/mcp', t.app.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(authorization ? { authorization } : {}) },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(response.status).toBe(401);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
      expect(response.headers.get('www-authenticate')).toContain('resource_metadata="');
      expect((await response.json()) as { type: string }).toMatchObject({ type: `${DEFAULT_PROBLEM_TYPE_BASE}/unauthenticated` });
    }
    await expect(connectOverHttp(fx.tokens.revoked)).rejects.toThrow(/401/);
  });
});

describe('what /v1/mcp refuses before any tool runs, as the API does', () => {
  const post = (headers: Record<string, string>, body: string) =>
    fetch(new URL('/v1/mcp', t.app.url), { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body });
  const listTools = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

  it('answers GET and DELETE 405 with Allow: POST (stateless: there is no stream), with an x-request-id', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(new URL('/v1/mcp', t.app.url), { method, headers: { authorization: `Bearer ${fx.tokens.all}`, accept: 'text/event-stream' } });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      expect(response.headers.get('x-request-id')).toMatch(/^req_/);
      expect(((await response.json()) as { type: string }).type).toBe(`${DEFAULT_PROBLEM_TYPE_BASE}/method-not-allowed`);
    }
  });

  it('refuses a browser Origin outside the allowlist (403), two Authorization headers (400) and a body over 1 MiB (413)', async () => {
    const foreign = await post({ authorization: `Bearer ${fx.tokens.all}`, origin: 'https://evil.example' }, listTools);
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toMatchObject({ code: 'origin-not-allowed' });
    const doubled = await new Promise<number>((resolve, reject) => {
      const url = new URL('/v1/mcp', t.app.url);
      const request = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: [['content-type', 'application/json'], ['authorization', `Bearer ${fx.tokens.all}`], ['authorization', `Bearer ${fx.tokens.readOnly}`]] as unknown as Record<string, string> }, (response) => {
        response.resume();
        resolve(response.statusCode!);
      });
      request.on('error', reject);
      request.end(listTools);
    });
    expect(doubled).toBe(400);
    const huge = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'createTask', arguments: { body: { projectId: fx.projectId, title: 'x'.repeat(1024 * 1024) } } } });
    const tooLarge = await post({ authorization: `Bearer ${fx.tokens.all}` }, huge);
    expect(tooLarge.status).toBe(413);
    const allowed = await post({ authorization: `Bearer ${fx.tokens.all}`, origin: fx.allowedOrigin }, listTools);
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(fx.allowedOrigin);
  });

  it('looks the caller up once per MCP request, however many tool calls it carries; each call still counts against the quota', async () => {
    const client = await connectOverHttp(fx.tokens.all);
    const usedThisMonth = async () => {
      const result = (await client.callTool({ name: 'getWorkspaceLimits', arguments: {} })) as CallToolResult;
      return (result.structuredContent as { monthlyQuota: { usedThisMonth: number } }).monthlyQuota.usedThisMonth;
    };
    const usedBefore = await usedThisMonth();
    const lookupsOfToken = () => lookups.filter((authorization) => authorization === `Bearer ${fx.tokens.all}`).length;
    const lookupsBefore = lookupsOfToken();
    const getTask = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'getTask', arguments: { taskId: fx.taskIds[0] } } });
    const batch = await post({ authorization: `Bearer ${fx.tokens.all}` }, JSON.stringify([getTask(1), getTask(2), { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'listTasks', arguments: { limit: 1 } } }]));
    expect(batch.status).toBe(200);
    const answers = (await batch.json()) as { id: number; result: CallToolResult }[];
    expect(answers.map(({ id, result }) => [id, result.isError ?? false])).toEqual(expect.arrayContaining([[1, false], [2, false], [3, false]]));
    expect(lookupsOfToken() - lookupsBefore).toBe(1);
    // Each tool call ran through the pipeline's admission: three calls of the batch, and the call that reads the count.
    expect((await usedThisMonth()) - usedBefore).toBe(4);
    expect(lookupsOfToken() - lookupsBefore).toBe(2);
  });

  it("names a tool call's request after the HTTP request that carried it", async () => {
    const response = await post({ authorization: `Bearer ${fx.tokens.readOnly}`, 'x-request-id': 'req_agent-test-1' }, JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'createProject', arguments: { body: { name: 'No' } } } }));
    expect(response.headers.get('x-request-id')).toBe('req_agent-test-1');
    const result = ((await response.json()) as { result: CallToolResult }).result;
    expect(problemOf(result).requestId).toBe('req_agent-test-1-1');
  });
});

/** What an MCP client shows for a call of an unknown tool: the JSON-RPC code once, then the server's sentence. */
const UNKNOWN_TOOL_MESSAGE = 'MCP error -32602: There is no tool launchRocket; tools/list names them.';

describe('MCP over stdio (npm run mcp, relaying to /v1/mcp)', () => {
  // As an agent's configuration runs it: `npm run --silent mcp`'s node command, from the project folder.
  const relayArgs = npmScriptNodeArguments('mcp');

  it('lists the same tools and calls them through the server', async () => {
    const client = new Client({ name: 'test-stdio', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [...relayArgs, '--base-url', t.app.url], cwd: REPO_ROOT, env: { ...(process.env as Record<string, string>), WORK_PLATFORM_TOKEN: fx.tokens.readOnly }, stderr: 'pipe' }),
    );
    clients.push(client);
    expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(operationsAllowedTo(['tasks:read']));
    const read = (await client.callTool({ name: 'getTask', arguments: { taskId: fx.taskIds[0] } })) as CallToolResult;
    expect((read.structuredContent as { id: string }).id).toBe(fx.taskIds[0]);
    const refused = (await client.callTool({ name: 'createProject', arguments: { body: { name: 'No' } } })) as CallToolResult;
    expect(problemOf(refused)).toMatchObject({ status: 403, requiredScopes: ['projects:write'] });
    // The server's protocol error as the server worded it: not wrapped again by the relay (once per hop, three times in all).
    const unknown = await client.callTool({ name: 'launchRocket', arguments: {} }).then(() => undefined, (thrown: unknown) => thrown);
    expect(unknown).toMatchObject({ code: -32602, message: UNKNOWN_TOOL_MESSAGE });
  });

  it('exits 1 with a clear message when the server refuses the token, 2 without one, and explains itself with --help', async () => {
    const refused = await runSourceFile('src/mcp/stdioRelay.ts', ['--base-url', t.app.url], { env: { WORK_PLATFORM_TOKEN: fx.tokens.revoked }, input: '' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('refused WORK_PLATFORM_TOKEN (401)');
    expect(refused.stdout).toBe('');
    const missing = await runSourceFile('src/mcp/stdioRelay.ts', [], { env: { WORK_PLATFORM_TOKEN: undefined }, input: '' });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('WORK_PLATFORM_TOKEN is not set');
    const help = await runSourceFile('src/mcp/stdioRelay.ts', ['--help'], { env: {}, input: '' });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: npm run --silent mcp');
  });
});
