// The agent tool server (Model Context Protocol): the tools of the Work-Platform API that the
// caller's token may call, each answered by the API's own pipeline. Served over Streamable HTTP at
// `/v1/mcp` by the API server; `npm run mcp` relays stdio to it.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallerResolver } from '../auth/bearerTokens.js';
import type { ResponseValidationMode } from '../config.js';
import { DEFAULT_MAX_BODY_BYTES, readBody, writeReply, type MountedApi, type MountedHandler } from '../http/httpAdapter.js';
import { MAX_JSON_DEPTH, topLevelScalar } from '../http/jsonNesting.js';
import type { CorsPolicy } from '../http/cors.js';
import { PipelineFailure } from '../contract/pipelineFailure.js';
import { storeOutageFailure } from '../contract/storeOutage.js';
import { ClientClosedError, PayloadTooLargeError, type Reply } from '../contract/reply.js';
import { originNotAllowed } from '../workPlatform/problems.js';
import type { Logger } from '../logger.js';
import { callTool } from './toolCalls.js';
import { protocolError } from './protocolErrors.js';
import { mayCall, toolsFromDocument, type OperationTool } from './toolCatalogue.js';

/** Under the API's own prefix, so that the API's OAuth resource (`<base>/v1`) covers it (RFC 9728 §3.3). */
export const MCP_PATH = '/v1/mcp';

/** The most a JSON-RPC request may carry: the API's own body limit. */
const MAX_BODY_BYTES = DEFAULT_MAX_BODY_BYTES;

const INSTRUCTIONS =
  'Tools of the Work-Platform API, one per operation, named by its operationId. Only the tools your token\'s scopes allow are listed. ' +
  'A failed call is a tool error whose text is an RFC 9457 problem: branch on its `type` and `code` (for example `insufficient-scope` with ' +
  '`requiredScopes`, `validation` with `errors`, `version-conflict`: read the resource again and pass its ETag as `If-Match`).';

export interface McpServerOptions {
  /** The API's browser-origin policy: an Origin not on its list is refused, as on the API. */
  cors: CorsPolicy;
  /** The served document the tools are made from. */
  document: object;
  /** The Work-Platform API as the HTTP adapter mounts it: tool calls are answered and checked the same way. */
  api: MountedApi;
  responseValidation: ResponseValidationMode;
  callers: CallerResolver;
  /** Where the authorization server's protected-resource metadata is, named in a 401's `WWW-Authenticate` (RFC 9728). */
  resourceMetadataUrl: string;
  version: string;
  logger: Logger;
}

/**
 * The SDK's parts that serve a request. Loaded on the first request to /v1/mcp, not at start-up: with zod and hono it
 * is a quarter of the server's start-up time, for an endpoint that many deployments never see called.
 */
async function loadSdk() {
  const [{ Server }, { StreamableHTTPServerTransport }, { CallToolRequestSchema, ListToolsRequestSchema, ErrorCode }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return { Server, StreamableHTTPServerTransport, CallToolRequestSchema, ListToolsRequestSchema, ErrorCode };
}

type McpSdk = Awaited<ReturnType<typeof loadSdk>>;

/** One MCP server for one caller: it lists the tools the scopes allow and calls any tool by name with the caller's credential. */
function serverFor(
  sdk: McpSdk,
  tools: ReadonlyMap<string, OperationTool>,
  scopes: readonly string[],
  authorization: string,
  requestId: string,
  options: McpServerOptions,
): Server {
  const { Server, CallToolRequestSchema, ListToolsRequestSchema, ErrorCode } = sdk;
  let calls = 0;
  const server = new Server({ name: 'work-platform', title: 'Work-Platform API', version: options.version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [...tools.values()]
      .filter((tool) => mayCall(tool, scopes))
      .map(({ name, title, description, inputSchema, annotations }) => ({ name, title, description, inputSchema, annotations })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = tools.get(request.params.name);
    if (!tool) throw protocolError(ErrorCode.InvalidParams, `There is no tool ${request.params.name}; tools/list names them.`);
    // A tool the scopes do not allow is still called: the API's own 403 tells the agent which scope is missing.
    calls += 1;
    // Each tool call is a request of its own, named after the HTTP request that carried it.
    return callTool(options.api, tool, request.params.arguments ?? {}, authorization, `${requestId}-${calls}`, options);
  });
  answerPerJsonRpc(server, requestId, options.logger);
  return server;
}

type RequestHandler = (request: { method: string; id?: unknown }, extra: { requestId?: unknown }) => Promise<unknown>;

/**
 * Every request handler of the server (the SDK's own included) answers as JSON-RPC says: params
 * that fail the method's schema are -32602 with a short message (the SDK would send -32603 with the
 * whole zod report: its schema check runs inside the handler); an error without a JSON-RPC code is
 * the server's fault, -32603, logged with both ids and quoted to the client by the HTTP request's id.
 */
export function answerPerJsonRpc(server: Server, requestId: string, logger: Logger): void {
  // The SDK keeps its handlers in a private map; test/mcp/jsonRpcErrors.test.ts fails if that changes.
  const handlers = (server as unknown as { _requestHandlers: Map<string, RequestHandler> })._requestHandlers;
  for (const [method, handler] of handlers) {
    handlers.set(method, async (request, extra) => {
      try {
        return await handler(request, extra);
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (isZodError(error)) throw protocolError(INVALID_PARAMS, `Invalid params of ${method}: ${firstIssue(error)}.`);
        if (typeof code === 'number' && Number.isSafeInteger(code) && code !== INTERNAL_ERROR) throw error;
        logger.error('mcp internal error', { requestId, jsonRpcId: extra.requestId ?? request.id, method, error: error instanceof Error ? error.message : String(error) });
        throw protocolError(INTERNAL_ERROR, `Internal error; quote ${requestId}.`);
      }
    });
  }
}

/** JSON-RPC 2.0's codes for a request whose params are wrong, and for the server's own failure. */
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;

interface SchemaIssue {
  path?: readonly PropertyKey[];
  message?: string;
}

/** zod's failure, from its classic API (`ZodError`) or its core (`$ZodError`, which the SDK's schema check throws). */
function isZodError(error: unknown): error is { issues: SchemaIssue[] } {
  if (typeof error !== 'object' || error === null) return false;
  const { name, issues } = error as { name?: unknown; issues?: unknown };
  return typeof name === 'string' && /^\$?ZodError$/.test(name) && Array.isArray(issues);
}

/** `params.arguments: expected record, received array`: the first failure, where it is, without the schema's report. */
function firstIssue(error: { issues: SchemaIssue[] }): string {
  const issue = error.issues[0];
  if (!issue) return 'they do not match the method';
  const where = (issue.path ?? []).map(String).join('.');
  const message = (issue.message ?? 'invalid').replace(/^Invalid input: /, '').slice(0, 200);
  return where ? `${where}: ${message}` : message;
}

/**
 * What the adapter refuses on /v1/mcp, as the API words it (problem+json), except a body nested too
 * deep: that is invalid params of a JSON-RPC request, -32602 with the request's id (HTTP 200, as the
 * SDK answers its own -32602), or with a null id and 400 when no id can be read.
 */
export function mcpErrorReply(api: MountedApi, error: unknown, requestId: string, body?: Buffer): Reply {
  if (!(error instanceof PipelineFailure) || error.failure.kind !== 'malformed-request' || error.failure.code !== 'json-too-deep') return api.errorReply(error, requestId);
  const id = body === undefined ? undefined : topLevelScalar(body.toString('utf8'), 'id');
  const message = `Invalid params: the message nests deeper than ${MAX_JSON_DEPTH} levels (tool arguments included).`;
  return {
    status: id === undefined || id === null ? 400 : 200,
    headers: { 'content-type': 'application/json' },
    body: { jsonrpc: '2.0', id: id ?? null, error: { code: INVALID_PARAMS, message } },
  };
}

/** `/v1/mcp` on the API server: stateless Streamable HTTP, the caller authenticated on every request by its bearer token. */
export function createMcpHttpHandler(options: McpServerOptions): MountedHandler {
  const tools = new Map(toolsFromDocument(options.document).map((tool) => [tool.name, tool]));
  const challenge = `Bearer realm="work-platform", resource_metadata="${options.resourceMetadataUrl}"`;
  let sdk: Promise<McpSdk> | undefined;
  return {
    owns: (path) => path === MCP_PATH,
    errorReply: (error, requestId, body) => mcpErrorReply(options.api, error, requestId, body),
    async handle(req: IncomingMessage, res: ServerResponse, requestId: string, checkedBody?: Buffer) {
      const method = req.method ?? 'POST';
      const refuse = (error: unknown, extraHeaders: Record<string, string> = {}) => {
        const reply = options.api.errorReply(error, requestId);
        const headers = { ...reply.headers, ...extraHeaders, ...(reply.status === 401 ? { 'www-authenticate': challenge } : {}) };
        writeReply(res, { ...reply, headers }, requestId, method, false);
      };
      res.setHeader('x-request-id', requestId);
      const cors = options.cors.check(method, req.headers);
      if (cors.kind === 'blocked') return refuse(originNotAllowed(cors.origin, cors.headers));
      if (cors.kind === 'preflight') {
        res.writeHead(204, cors.headers).end();
        return;
      }
      for (const [name, value] of Object.entries(cors.headers)) res.setHeader(name, value);
      // Stateless: no session to resume and nothing to push, so a GET stream or a DELETE has nothing to do.
      if (method !== 'POST') return refuse(new PipelineFailure({ kind: 'method-not-allowed', method, path: MCP_PATH, allowed: ['POST'] }), { allow: 'POST' });
      const authorization = req.headers.authorization;
      let scopes: readonly string[];
      try {
        ({ scopes } = await options.callers.resolve(authorization));
      } catch (error) {
        // The database cannot look the token up now: the API's 503 with Retry-After, before any JSON-RPC.
        return refuse(storeOutageFailure(error) ?? error);
      }
      let body: unknown;
      try {
        // A JSON body was read and checked (size, depth) by the adapter. Any other is read and dropped here, never parsed:
        // the SDK refuses its media type (415).
        if (checkedBody === undefined) await readBody(req, MAX_BODY_BYTES);
        body = checkedBody === undefined ? undefined : JSON.parse(checkedBody.toString('utf8'));
      } catch (error) {
        // The adapter logs a client that went away; there is nobody to answer.
        if (error instanceof ClientClosedError) throw error;
        if (error instanceof PayloadTooLargeError) return refuse(new PipelineFailure({ kind: 'payload-too-large', limitBytes: MAX_BODY_BYTES }));
        const parseError = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the body is not JSON' } });
        res.writeHead(400, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(parseError)) }).end(parseError);
        return;
      }
      const loaded = await (sdk ??= loadSdk());
      const server = serverFor(loaded, tools, scopes, authorization!, requestId, options);
      const transport = new loaded.StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      transport.onerror = (error) => options.logger.warn('mcp transport error', { requestId, error: error.message });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    },
  };
}

