// Errors Node's HTTP parser finds before any API sees the request (headers too large, malformed
// HTTP, a request that does not arrive in time) are answered in the error shape of the API the
// request was for, with the request id header, and the connection closed.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { PipelineFailure, type Failure } from '../contract/pipelineFailure.js';
import type { Reply } from '../contract/reply.js';
import { requestIdFor } from './httpAdapter.js';

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

/** The path of the request line, as far as it arrived (`GET /api/v1/posts HTTP/1.1`). */
function pathOf(rawPacket: unknown): string {
  if (!Buffer.isBuffer(rawPacket)) return '/';
  return /^[A-Z]+ (\/[^ \r\n?]*)/.exec(rawPacket.subarray(0, 2048).toString('latin1'))?.[1] ?? '/';
}

/**
 * The server's `clientError` listener: `errorReplyFor(path)` is the error funnel of the API that
 * owns the path (the first API for paths no API owns).
 */
export function answerEdgeError(
  error: NodeJS.ErrnoException & { rawPacket?: unknown },
  socket: Socket,
  limits: EdgeLimits,
  errorReplyFor: (path: string) => (error: unknown, requestId: string) => Reply,
): void {
  const failure = failureOf(error, limits);
  if (!failure || !socket.writable) {
    socket.destroy();
    return;
  }
  const requestId = requestIdFor(undefined);
  const reply = errorReplyFor(pathOf(error.rawPacket))(new PipelineFailure(failure), requestId);
  const body = Buffer.from(JSON.stringify(reply.body));
  const headers: Record<string, string> = { ...reply.headers, 'x-request-id': requestId, 'content-length': String(body.length), connection: 'close' };
  const head = [`HTTP/1.1 ${reply.status} ${STATUS_CODES[reply.status] ?? ''}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)].join('\r\n');
  socket.end(Buffer.concat([Buffer.from(`${head}\r\n\r\n`, 'latin1'), body]));
}
