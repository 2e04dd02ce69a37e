// Errors Node's HTTP parser finds before any API sees the request (headers too large, malformed
// HTTP, a request that does not arrive in time) are answered in the error shape of the API the
// request was for, with the request id header, and the connection closed.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { PipelineFailure, type Failure } from '../contract/pipelineFailure.js';
import type { Reply } from '../contract/reply.js';
import { LAST_PATH, requestIdFor } from './httpAdapter.js';

export interface EdgeLimits {
  maxHeaderBytes: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
}

/** The failure Node's error stands for, or undefined when the client only went away. */
function failureOf(error: NodeJS.ErrnoException, limits: EdgeLimits): Failure | undefined {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { kind: 'headers-too-large', limitBytes: limits.maxHeaderBytes };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { kind: 'request-timeout', timeoutMs: limits.headersTimeoutMs };
    case 'ECONNRESET':
    case 'EPIPE':
      return undefined;
    default:
      return { kind: 'malformed-request', reason: `not valid HTTP (${error.code?.startsWith('HPE_') ? error.code.slice(4).toLowerCase().replaceAll('_', ' ') : 'unreadable'})` };
  }
}

/** What Node's server keeps on a connection's socket: the response in flight, if any. */
type ServerSocket = Socket & { _httpMessage?: { headersSent?: boolean; req?: { url?: string } }; [LAST_PATH]?: string };

/** The longest start of a connection kept to find its first request's path (a longer request line names none). */
const REQUEST_LINE_BYTES = 4096;

/** The path of a request line once its target has arrived whole (`GET /v1/tasks?` or `GET /v1/tasks `), origin or absolute form. */
function requestLinePathOf(head: string): string | undefined {
  return /^[A-Z]+ (?:https?:\/\/[^/ \r\n]+)?(\/[^ \r\n?]*)[ ?\r\n]/.exec(head)?.[1];
}

/**
 * Keeps a new connection's first bytes until its request line names a path, then records the path
 * as the connection's LAST_PATH. Node's parser keeps a partial request line to itself, so without
 * this a fresh connection whose head never completes (a 408) could not be answered in its API's shape.
 * The cost: a `data` listener takes the socket off Node's native read path for its lifetime, so
 * each read passes through a JavaScript stream event once more (microseconds, as on a TLS socket).
 */
export function noteRequestLine(socket: Socket): void {
  let head = '';
  const onData = (chunk: Buffer) => {
    head += chunk.toString('latin1', 0, Math.min(chunk.length, REQUEST_LINE_BYTES - head.length));
    const path = requestLinePathOf(head);
    if (path === undefined && head.length < REQUEST_LINE_BYTES && !head.includes('\n')) return;
    socket.removeListener('data', onData);
    const serverSocket = socket as ServerSocket;
    // The request listener, called while Node parsed this same chunk, has already set it.
    if (path !== undefined) serverSocket[LAST_PATH] ??= path;
  };
  socket.on('data', onData);
}

/**
 * The path the failed request was for: its request line, as far as it arrived (`GET /api/v1/posts
 * HTTP/1.1`); for a timeout, which Node reports without it, the request in flight (a body too
 * slow), or else the last path this connection asked for, or named in its first request line
 * (noteRequestLine). Undefined when the connection never sent a whole request target.
 */
function pathOf(rawPacket: unknown, socket: ServerSocket): string | undefined {
  if (Buffer.isBuffer(rawPacket)) {
    const path = /^[A-Z]+ (\/[^ \r\n?]*)/.exec(rawPacket.subarray(0, 2048).toString('latin1'))?.[1];
    if (path) return path;
  }
  const inFlight = socket._httpMessage?.req?.url;
  if (inFlight) return inFlight.split('?')[0]!;
  return socket[LAST_PATH];
}

/**
 * The error shape for a path (the adapter's `errorReplyFor`: an API by its declared prefix, or a
 * mounted handler such as /oauth; the first API for paths nobody owns), and for a connection that
 * named no path (undefined): the neutral shape the specs describe, RFC 9457 problem+json.
 */
export type EdgeErrorReplyFor = (path: string | undefined) => (error: unknown, requestId: string) => Reply;

/** The server's `clientError` listener. */
export function answerEdgeError(
  error: NodeJS.ErrnoException & { rawPacket?: unknown },
  socket: Socket,
  limits: EdgeLimits,
  errorReplyFor: EdgeErrorReplyFor,
): void {
  const failure = failureOf(error, limits);
  const serverSocket = socket as ServerSocket;
  // An answer already under way cannot be followed by another on the same connection.
  if (!failure || !socket.writable || serverSocket._httpMessage?.headersSent) {
    socket.destroy();
    return;
  }
  const requestId = requestIdFor(undefined);
  const reply = errorReplyFor(pathOf(error.rawPacket, serverSocket))(new PipelineFailure(failure), requestId);
  const body = Buffer.from(typeof reply.body === 'string' || Buffer.isBuffer(reply.body) ? reply.body : JSON.stringify(reply.body));
  const headers: Record<string, string> = { ...reply.headers, 'x-request-id': requestId, 'content-length': String(body.length), connection: 'close' };
  const head = [`HTTP/1.1 ${reply.status} ${STATUS_CODES[reply.status] ?? ''}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)].join('\r\n');
  socket.end(Buffer.concat([Buffer.from(`${head}\r\n\r\n`, 'latin1'), body]));
}
