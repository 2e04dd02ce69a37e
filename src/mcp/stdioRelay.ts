// `npm run mcp`: the agent tool server on stdio, for MCP clients that start their servers as child
// processes. It relays every request to the Streamable HTTP endpoint of a running API server
// (`<base URL>/v1/mcp`) with the token from WORK_PLATFORM_TOKEN, so the tools, the scope filter and
// every answer are the server's own, local or remote.

import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { asReceived } from './protocolErrors.js';

const HELP = `Usage: npm run --silent mcp -- [--base-url URL]

The Work-Platform agent tool server (Model Context Protocol) on stdin/stdout. It relays to the
Streamable HTTP endpoint <URL>/v1/mcp of a running API server, so start the server first (npm start).

Options:
  --base-url URL   The API server (default: WORK_PLATFORM_URL, else http://localhost:3000).
  --help           This text.

Environment:
  WORK_PLATFORM_TOKEN   Required. A Personal Access Token (svc_pat_…) or OAuth access token; the
                        tools listed are those its scopes allow. The relay sends it as it is:
                        an OAuth access token lives 15 minutes, so prefer a PAT here.
  WORK_PLATFORM_URL     The API server, when --base-url is not given.

Nothing but MCP messages is written to stdout; errors go to stderr, and the process exits 1 when
the server cannot be reached or refuses the token.`;

async function main(): Promise<number> {
  let values: { 'base-url'?: string; help?: boolean };
  try {
    ({ values } = parseArgs({ options: { 'base-url': { type: 'string' }, help: { type: 'boolean' } }, strict: true }));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${HELP}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const token = process.env.WORK_PLATFORM_TOKEN?.trim();
  if (!token) {
    process.stderr.write('WORK_PLATFORM_TOKEN is not set: export a Personal Access Token or OAuth access token first (see --help).\n');
    return 2;
  }
  const baseUrl = values['base-url'] ?? process.env.WORK_PLATFORM_URL ?? 'http://localhost:3000';
  let endpoint: URL;
  try {
    // Relative to the base URL's own path, so a server mounted below a path prefix is reached too.
    endpoint = new URL('v1/mcp', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  } catch {
    process.stderr.write(`--base-url must be an absolute URL such as http://localhost:3000; got "${baseUrl}".\n`);
    return 2;
  }

  const upstream = new Client({ name: 'work-platform-stdio-relay', version: '1.0.0' });
  try {
    await upstream.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  } catch (error) {
    const message = (error as Error).message;
    const refused = /\b401\b/.test(message);
    process.stderr.write(refused ? `${endpoint.href} refused WORK_PLATFORM_TOKEN (401): the token is unknown, revoked or expired.\n` : `Cannot reach ${endpoint.href}: ${message}\n`);
    return 1;
  }
  const remote = upstream.getServerVersion();
  const relay = new Server(
    { name: remote?.name ?? 'work-platform', version: remote?.version ?? '0.0.0' },
    { capabilities: { tools: {} }, ...(upstream.getInstructions() ? { instructions: upstream.getInstructions() } : {}) },
  );
  // The server's errors (an unknown tool) pass on as the server worded them, not wrapped once more by this hop.
  relay.setRequestHandler(ListToolsRequestSchema, (request) => upstream.listTools(request.params).catch(asReceived));
  relay.setRequestHandler(CallToolRequestSchema, (request) => upstream.callTool(request.params).catch(asReceived));
  const closed = new Promise<void>((resolve) => (relay.onclose = resolve));
  await relay.connect(new StdioServerTransport());
  await closed;
  await upstream.close();
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`mcp relay failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
