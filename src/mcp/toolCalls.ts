// A tool call is an HTTP request to the API that answers it, made in the process: the same
// pipeline (authentication, scopes, limits, validation, idempotency, the handler) answers it as if
// it had come over the network, and its answer becomes the tool's result.

import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { HandledCall, IncomingCall, Reply } from '../contract/reply.js';
import { checkAgainstContract, type HttpAdapterOptions, type MountedApi } from '../http/httpAdapter.js';
import { BODY_MEMBER, type OperationTool } from './toolCatalogue.js';

/** Response headers an agent needs for its next call (the version to send as If-Match, where a new resource is). */
const HEADERS_FOR_THE_AGENT = ['etag', 'location', 'retry-after'] as const;

function text(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The HTTP request the arguments describe; or, for an argument of the wrong kind (the agent's error, answered before any call), why not. */
function callOf(tool: OperationTool, args: Record<string, unknown>, caller: unknown, requestId: string): IncomingCall | { refused: string } {
  const known = new Set([...tool.parameters.map((parameter) => parameter.name), ...(tool.body === 'none' ? [] : [BODY_MEMBER])]);
  const unknown = Object.keys(args).filter((name) => !known.has(name));
  if (unknown.length > 0) return { refused: `${tool.name} takes no argument ${unknown.map((name) => `"${name}"`).join(', ')}; it takes ${[...known].join(', ') || 'no arguments'}.` };
  let path = tool.path;
  const query = new URLSearchParams();
  const headers: Record<string, string> = {};
  for (const parameter of tool.parameters) {
    const value = args[parameter.name];
    if (value === undefined || value === null) {
      if (parameter.in === 'path' || parameter.required) return { refused: `${tool.name} needs "${parameter.name}".` };
      continue;
    }
    if (typeof value === 'object') return { refused: `"${parameter.name}" must be a string, number or boolean.` };
    if (parameter.in === 'path') path = path.replace(`{${parameter.name}}`, encodeURIComponent(String(value)));
    else if (parameter.in === 'query') query.append(parameter.name, String(value));
    else headers[parameter.name.toLowerCase()] = String(value);
  }
  // One key per tool call, so that the pipeline's retries and the agent's are told apart; an agent that retries a call passes its own.
  if (tool.parameters.some((parameter) => parameter.name === 'Idempotency-Key') && headers['idempotency-key'] === undefined) headers['idempotency-key'] = randomUUID();
  let body: Buffer | undefined;
  if (args[BODY_MEMBER] !== undefined) {
    body = Buffer.from(JSON.stringify(args[BODY_MEMBER]));
    headers['content-type'] = 'application/json';
  }
  return { method: tool.method, path, rawQuery: query.toString(), headers, readBody: async () => body, requestId, provenCaller: caller };
}

function bodyOf(reply: Reply): unknown {
  if (reply.body === undefined) return undefined;
  if (typeof reply.body === 'string' || Buffer.isBuffer(reply.body)) {
    const raw = reply.body.toString();
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      return raw;
    }
  }
  return reply.body;
}

/**
 * The answer as a tool result: a success is its body as JSON (and as structured content), with the
 * headers the agent needs next; a problem is a tool error whose text is the problem itself, so the
 * agent can branch on `type` and `code` and read `detail`, `requiredScopes` or `errors`.
 */
export function resultOf(reply: Reply, requestId: string): CallToolResult {
  const body = bodyOf(reply);
  const content: CallToolResult['content'] = [];
  const headers = Object.fromEntries(Object.entries(reply.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
  const meta = HEADERS_FOR_THE_AGENT.filter((name) => headers[name] !== undefined).map((name) => `${name}: ${headers[name]}`);
  if (reply.status >= 400) {
    content.push({ type: 'text', text: text(body ?? { status: reply.status, requestId }) });
    if (meta.length > 0) content.push({ type: 'text', text: meta.join('\n') });
    return { isError: true, content };
  }
  content.push({ type: 'text', text: body === undefined ? `${reply.status}: done, no content` : text(body) });
  if (meta.length > 0) content.push({ type: 'text', text: meta.join('\n') });
  const structured = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  return { content, ...(structured ? { structuredContent: structured } : {}) };
}

/**
 * Answers the tool call as the HTTP adapter answers a request: the API's pipeline, its error funnel, the response
 * contract check. The caller is the MCP request's, looked up once for all its tool calls; each call is still
 * checked against its operation's schemes, scopes and roles, and counted against the limits.
 */
export async function callTool<Caller>(
  api: MountedApi<Caller>,
  tool: OperationTool,
  args: Record<string, unknown>,
  caller: Caller,
  requestId: string,
  checks: Pick<HttpAdapterOptions, 'responseValidation' | 'logger'>,
): Promise<CallToolResult> {
  const call = callOf(tool, args, caller, requestId);
  if ('refused' in call) return { isError: true, content: [{ type: 'text', text: call.refused }] };
  let handled: HandledCall;
  try {
    handled = await api.api.handle(call);
  } catch (error) {
    handled = { reply: api.errorReply(error, call.requestId) };
  }
  return resultOf(checkAgainstContract(handled.reply, handled.operationId, call.requestId, api, checks), call.requestId);
}
