// The agent tool server (Model Context Protocol): the tools of the Work-Platform API that the
// caller's token may call, each answered by the API's own pipeline. Served over Streamable HTTP at
// `/mcp` by the API server; `npm run mcp` relays stdio to it.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallerResolver } from '../auth/bearerTokens.js';
import type { ResponseValidationMode } from '../config.js';
import { DEFAULT_MAX_BODY_BYTES, duplicateAuthorization, readBody, writeReply, type MountedApi, type MountedHandler } from '../http/httpAdapter.js';
import type { CorsPolicy } from '../http/cors.js';
import { PipelineFailure } from '../contract/pipelineFailure.js';
import { ClientClosedError, PayloadTooLargeError } from '../contract/reply.js';
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
  return server;
}

/** `/v1/mcp` on the API server: stateless Streamable HTTP, the caller authenticated on every request by its bearer token. */
export function createMcpHttpHandler(options: McpServerOptions): MountedHandler {
  const tools = new Map(toolsFromDocument(options.document).map((tool) => [tool.name, tool]));
  const challenge = `Bearer realm="work-platform", resource_metadata="${options.resourceMetadataUrl}"`;
  let sdk: Promise<McpSdk> | undefined;
  return {
    owns: (path) => path === MCP_PATH,
    async handle(req: IncomingMessage, res: ServerResponse, requestId: string) {
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
      const duplicate = duplicateAuthorization(req);
      if (duplicate) return refuse(duplicate);
      const authorization = req.headers.authorization;
      let scopes: readonly string[];
      try {
        ({ scopes } = await options.callers.resolve(authorization));
      } catch (error) {
        return refuse(error);
      }
      let body: unknown;
      try {
        const raw = await readBody(req, MAX_BODY_BYTES);
        body = raw === undefined ? undefined : JSON.parse(raw.toString('utf8'));
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

