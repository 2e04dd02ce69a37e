// Errors Node's HTTP parser finds before any API sees the request (headers too large, malformed
// HTTP, a request that does not arrive in time) are answered in the error shape of the API the
// request was for, with the request id header, and the connection closed.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { PipelineFailure, type Failure } from '../contract/pipelineFailure.js';
import { LAST_PATH, requestIdFor, type ErrorReplyFor } from './httpAdapter.js';

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

/**
 * The path the failed request was for: its request line, as far as it arrived (`GET /api/v1/posts
 * HTTP/1.1`); for a timeout, which Node reports without it, the request in flight (a body too
 * slow), or else the last path this connection asked for. A connection whose first request head
 * never completes names no path: Node's parser keeps the partial request line to itself.
 */
function pathOf(rawPacket: unknown, socket: ServerSocket): string {
  if (Buffer.isBuffer(rawPacket)) {
    const path = /^[A-Z]+ (\/[^ \r\n?]*)/.exec(rawPacket.subarray(0, 2048).toString('latin1'))?.[1];
    if (path) return path;
  }
  const inFlight = socket._httpMessage?.req?.url;
  if (inFlight) return inFlight.split('?')[0]!;
  return socket[LAST_PATH] ?? '/';
}

/**
 * The server's `clientError` listener: `errorReplyFor(path)` is the error shape of the surface
 * that owns the path (the adapter's `errorReplyFor`: an API by its declared prefix, or a mounted
 * handler such as /oauth; the first API for paths nobody owns).
 */
export function answerEdgeError(
  error: NodeJS.ErrnoException & { rawPacket?: unknown },
  socket: Socket,
  limits: EdgeLimits,
  errorReplyFor: ErrorReplyFor,
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
