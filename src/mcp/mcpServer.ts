// The agent tool server (Model Context Protocol): the tools of the Work-Platform API that the
// caller's token may call, each answered by the API's own pipeline. Served over Streamable HTTP at
// `/v1/mcp` by the API server; `npm run mcp` relays stdio to it.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Caller } from '../auth/bearerTokens.js';
import type { ResponseValidationMode } from '../config.js';
import { JsonTooDeepError, writeReply, type MountedApi, type MountedHandler } from '../http/httpAdapter.js';
import { isJsonMediaType, MAX_JSON_DEPTH, topLevelScalar } from '../http/jsonNesting.js';
import { PipelineFailure } from '../contract/pipelineFailure.js';
import type { IncomingCall, Reply } from '../contract/reply.js';
import type { Logger } from '../logger.js';
import { callTool } from './toolCalls.js';
import { protocolError } from './protocolErrors.js';
import { mayCall, toolsFromDocument, type OperationTool } from './toolCatalogue.js';

/** Under the API's own prefix (`/v1/mcp`), so that the API's OAuth resource (`<base>/v1`) covers it (RFC 9728 §3.3). */
const mcpPathUnder = (apiPrefix: string) => `${apiPrefix}/mcp`;

const INSTRUCTIONS =
  'Tools of the Work-Platform API, one per operation, named by its operationId. Only the tools your token\'s scopes allow are listed. ' +
  'A failed call is a tool error whose text is an RFC 9457 problem: branch on its `type` and `code` (for example `insufficient-scope` with ' +
  '`requiredScopes`, `validation` with `errors`, `version-conflict`: read the resource again and pass its ETag as `If-Match`).';

export interface McpServerOptions {
  /** The served document the tools are made from. */
  document: object;
  /**
   * The Work-Platform API as the HTTP adapter mounts it: its CORS and its caller for the MCP request,
   * its pipeline, error funnel and response check for each tool call.
   */
  api: MountedApi<Caller>;
  responseValidation: ResponseValidationMode;
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

/** One MCP server for one caller: it lists the tools the scopes allow and calls any tool by name as that caller. */
function serverFor(sdk: McpSdk, tools: ReadonlyMap<string, OperationTool>, caller: Caller, requestId: string, options: McpServerOptions): Server {
  const { Server, CallToolRequestSchema, ListToolsRequestSchema, ErrorCode } = sdk;
  let calls = 0;
  const server = new Server({ name: 'work-platform', title: 'Work-Platform API', version: options.version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [...tools.values()]
      .filter((tool) => mayCall(tool, caller.scopes))
      .map(({ name, title, description, inputSchema, annotations }) => ({ name, title, description, inputSchema, annotations })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = tools.get(request.params.name);
    if (!tool) throw protocolError(ErrorCode.InvalidParams, `There is no tool ${request.params.name}; tools/list names them.`);
    // A tool the scopes do not allow is still called: the API's own 403 tells the agent which scope is missing.
    calls += 1;
    // Each tool call is a request of its own, named after the HTTP request that carried it.
    return callTool(options.api, tool, request.params.arguments ?? {}, caller, `${requestId}-${calls}`, options);
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
  if (!(error instanceof JsonTooDeepError)) return api.errorReply(error, requestId);
  const id = body === undefined ? undefined : topLevelScalar(body.toString('utf8'), 'id');
  const message = `Invalid params: the message nests deeper than ${MAX_JSON_DEPTH} levels (tool arguments included).`;
  return {
    status: id === undefined || id === null ? 400 : 200,
    headers: { 'content-type': 'application/json' },
    body: { jsonrpc: '2.0', id: id ?? null, error: { code: INVALID_PARAMS, message } },
  };
}

/**
 * `/v1/mcp` on the API server: stateless Streamable HTTP. The adapter applies its rules (one
 * Authorization header, the body's size and depth); the API screens the request (CORS) and looks its
 * caller up, once, for every tool call the request carries.
 */
export function createMcpHttpHandler(options: McpServerOptions): MountedHandler {
  const tools = new Map(toolsFromDocument(options.document).map((tool) => [tool.name, tool]));
  const path = mcpPathUnder(options.api.api.pathPrefix);
  const challenge = `Bearer realm="work-platform", resource_metadata="${options.resourceMetadataUrl}"`;
  let sdk: Promise<McpSdk> | undefined;
  return {
    owns: (candidate) => candidate === path,
    bodies: 'all',
    errorReply: (error, requestId, body) => mcpErrorReply(options.api, error, requestId, body),
    async handle(req: IncomingMessage, res: ServerResponse, requestId: string, body?: Buffer) {
      const method = req.method ?? 'POST';
      const call: IncomingCall = { method, path, rawQuery: '', headers: req.headers, readBody: async () => body, requestId };
      const answer = (reply: Reply) => {
        const headers = reply.status === 401 ? { ...reply.headers, 'www-authenticate': challenge } : reply.headers;
        writeReply(res, { ...reply, headers }, requestId, method, false);
      };
      const screening = options.api.api.screen(call);
      if (screening.reply) return answer({ ...screening.reply, headers: { ...screening.headers, ...screening.reply.headers } });
      for (const [name, value] of Object.entries(screening.headers)) res.setHeader(name, value);
      res.setHeader('x-request-id', requestId);
      // Stateless: no session to resume and nothing to push, so a GET stream or a DELETE has nothing to do.
      if (method !== 'POST') return answer(options.api.errorReply(new PipelineFailure({ kind: 'method-not-allowed', method, path, allowed: ['POST'] }), requestId));
      const identified = await options.api.api.identify(call);
      if ('reply' in identified) return answer(identified.reply);
      let message: unknown;
      // A body of another media type is not parsed: the SDK refuses it (415).
      if (body !== undefined && isJsonMediaType(req.headers['content-type'])) {
        try {
          message = JSON.parse(body.toString('utf8'));
        } catch {
          return answer({ status: 400, headers: { 'content-type': 'application/json' }, body: { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the body is not JSON' } } });
        }
      }
      const loaded = await (sdk ??= loadSdk());
      const server = serverFor(loaded, tools, identified.caller, requestId, options);
      const transport = new loaded.StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      transport.onerror = (error) => options.logger.warn('mcp transport error', { requestId, error: error.message });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, message);
    },
  };
}
