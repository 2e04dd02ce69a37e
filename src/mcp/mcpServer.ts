// The agent tool server (Model Context Protocol): the tools of the Work-Platform API that the
// caller's token may call, each answered by the API's own pipeline. Served over Streamable HTTP at
// `/mcp` by the API server; `npm run mcp` relays stdio to it.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { CallerResolver } from '../auth/bearerTokens.js';
import type { ResponseValidationMode } from '../config.js';
import { writeReply, type MountedApi, type MountedHandler } from '../http/httpAdapter.js';
import type { Logger } from '../logger.js';
import { callTool } from './toolCalls.js';
import { mayCall, toolsFromDocument, type OperationTool } from './toolCatalogue.js';

export const MCP_PATH = '/mcp';

const INSTRUCTIONS =
  'Tools of the Work-Platform API, one per operation, named by its operationId. Only the tools your token\'s scopes allow are listed. ' +
  'A failed call is a tool error whose text is an RFC 9457 problem: branch on its `type` and `code` (for example `insufficient-scope` with ' +
  '`requiredScopes`, `validation` with `errors`, `version-conflict`: read the resource again and pass its ETag as `If-Match`).';

export interface McpServerOptions {
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

/** One MCP server for one caller: it lists the tools the scopes allow and calls any tool by name with the caller's credential. */
function serverFor(tools: readonly OperationTool[], scopes: readonly string[], authorization: string, options: McpServerOptions): Server {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const server = new Server({ name: 'work-platform', title: 'Work-Platform API', version: options.version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools
      .filter((tool) => mayCall(tool, scopes))
      .map(({ name, title, description, inputSchema, annotations }) => ({ name, title, description, inputSchema, annotations })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = byName.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `There is no tool ${request.params.name}; tools/list names them.`);
    // A tool the scopes do not allow is still called: the API's own 403 tells the agent which scope is missing.
    return callTool(options.api, tool, request.params.arguments ?? {}, authorization, options);
  });
  return server;
}

/** `/mcp` on the API server: stateless Streamable HTTP, the caller authenticated on every request by its bearer token. */
export function createMcpHttpHandler(options: McpServerOptions): MountedHandler {
  const tools = toolsFromDocument(options.document);
  const challenge = `Bearer realm="work-platform", resource_metadata="${options.resourceMetadataUrl}"`;
  return {
    owns: (path) => path === MCP_PATH,
    async handle(req: IncomingMessage, res: ServerResponse, requestId: string) {
      const authorization = req.headers.authorization;
      let scopes: readonly string[];
      try {
        ({ scopes } = await options.callers.resolve(authorization));
      } catch (error) {
        const reply = options.api.errorReply(error, requestId);
        if (reply.status === 401) reply.headers = { ...reply.headers, 'www-authenticate': challenge };
        writeReply(res, reply, requestId, req.method ?? 'POST', false);
        return;
      }
      const server = serverFor(tools, scopes, authorization!, options);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      transport.onerror = (error) => options.logger.warn('mcp transport error', { requestId, error: error.message });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res);
    },
  };
}

