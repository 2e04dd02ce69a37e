import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ResponseValidationMode } from '../config.js';
import { PipelineFailure } from '../contract/pipelineFailure.js';
import { storeOutageFailure } from '../contract/storeOutage.js';
import { ClientClosedError, PayloadTooLargeError, type ContractApi, type IncomingCall, type Reply } from '../contract/reply.js';
import type { ResponseContract } from '../contract/responseContract.js';
import type { PhaseTimings } from '../contract/phaseTimings.js';
import type { Logger } from '../logger.js';
import { isJsonMediaType, MAX_JSON_DEPTH, nestsDeeperThan } from './jsonNesting.js';

export interface MountedApi<Caller = unknown> {
  api: ContractApi<Caller>;
  responseContract: ResponseContract;
  /** Turns anything the adapter itself cannot handle into this API's error shape. */
  errorReply: (error: unknown, requestId: string) => Reply;
}

/**
 * Paths answered outside the contract pipeline, in a protocol of their own (the OAuth 2.0
 * authorization server, MCP). Asked first; it writes its own answers, the adapter only logs them.
 * The adapter's rules (one Authorization header, the body's size and JSON depth) apply to them as
 * to the APIs: what they refuse is worded by `errorReply`, or by the API whose prefix the path is under.
 */
export interface MountedHandler {
  owns(path: string): boolean;
  /** False: its requests get no request log line (the health probes, which come every few seconds). */
  logged?: boolean;
  /**
   * Which request bodies the adapter reads and checks (the size limit, a JSON body's depth) before
   * `handle`: JSON ones (by Content-Type; the default, for a handler that reads its forms from the
   * stream, as oidc-provider does), or all of them.
   */
  bodies?: 'json' | 'all';
  /**
   * `body`: the request body the adapter read and checked (see `bodies`); undefined when it is empty,
   * or when it is not JSON and the handler reads it from `req` itself.
   */
  handle(req: IncomingMessage, res: ServerResponse, requestId: string, body?: Buffer): Promise<void>;
  /** This surface's error shape for what the adapter refuses (a PipelineFailure); `body` is the refused JSON body, when there is one. */
  errorReply?(error: unknown, requestId: string, body?: Buffer): Reply;
}

export interface HttpAdapterOptions {
  /** Matched by longest path prefix; the first one listed also answers paths that no API owns. */
  apis: MountedApi[];
  handlers?: MountedHandler[];
  responseValidation: ResponseValidationMode;
  logger: Logger;
  logRequests: boolean;
  maxBodyBytes?: number;
  now?: () => number;
  /** True once the server is shutting down: every answer then closes its connection. */
  isDraining?: () => boolean;
  /** Where the encode and write phases and each call's whole time are added, when asked for (PHASE_TIMINGS_FILE). */
  phaseTimings?: PhaseTimings;
}

/** The largest request body the APIs read (the contract's 413 `payload-too-large` says 1 MiB). */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** What an `x-request-id` may be: a client's own is kept when it matches, and every id the server makes does. */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

const REQUEST_ID_BYTES = 12;
// One call to the random source for many ids instead of one per request.
let randomPool = Buffer.alloc(0);
let randomPoolOffset = 0;

export function requestIdFor(header: string | string[] | undefined): string {
  if (typeof header === 'string' && REQUEST_ID_PATTERN.test(header)) return header;
  if (randomPoolOffset + REQUEST_ID_BYTES > randomPool.length) {
    randomPool = randomBytes(REQUEST_ID_BYTES * 512);
    randomPoolOffset = 0;
  }
  const id = randomPool.toString('hex', randomPoolOffset, randomPoolOffset + REQUEST_ID_BYTES);
  randomPoolOffset += REQUEST_ID_BYTES;
  return `req_${id}`;
}

export type RequestListener = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

export type ErrorReplyFor = (path: string) => (error: unknown, requestId: string) => Reply;

/** The request listener, and the error shape of the surface that owns a path (for errors Node's parser answers: src/http/edgeErrors.ts). */
export type HttpAdapter = RequestListener & { errorReplyFor: ErrorReplyFor };

/** The last path a connection asked for: the best guess for an error Node reports without the request line (a timeout). */
export const LAST_PATH = Symbol('last path asked on this connection');

/**
 * Where a request enters: it turns a node:http request into an `IncomingCall`, hands it to the
 * API that owns the path (or to a mounted handler: MCP, OAuth, health, the index), checks the reply against the contract when asked to, and
 * writes it. A plain request listener, not an Express app: the pipeline routes by the contract
 * and needs none of Express's routing or response helpers, which cost more per request than the
 * whole pipeline does (see docs/performance.md).
 */
export function createHttpAdapter(options: HttpAdapterOptions): HttpAdapter {
  const apis = [...options.apis].sort((a, b) => b.api.pathPrefix.length - a.api.pathPrefix.length);
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const now = options.now ?? Date.now;
  /** The API whose declared prefix is the longest one the path is under; the first API for paths no API owns. */
  const apiFor = (path: string) => apis.find(({ api }) => isUnderPrefix(path, api.pathPrefix)) ?? options.apis[0]!;
  const errorReplyFor: ErrorReplyFor = (path) => {
    const handler = options.handlers?.find((candidate) => candidate.owns(path));
    if (handler?.errorReply) return handler.errorReply.bind(handler);
    return apiFor(path).errorReply;
  };

  type LineFields = { requestId: string; method: string; path: string; operationId: string | undefined; status: number };
  const durationMs = (startedAt: bigint) => Number((process.hrtime.bigint() - startedAt) / 1000n) / 1000;
  /** One JSON log line per request, when asked for. */
  const logRequest = (fields: LineFields, startedAt: bigint) => {
    if (!options.logRequests) return;
    options.logger.info('request', { ...fields, durationMs: durationMs(startedAt), at: now() });
  };
  /**
   * The one line of a request whose client went away before its answer (a body cut off, a closed
   * socket): at info, with nginx's 499, always written (it takes the place of the error a broken
   * read used to be logged as), and nothing is answered.
   */
  const logClientClosed = (fields: Omit<LineFields, 'status'>, startedAt: bigint) => {
    options.logger.info(CLIENT_CLOSED, { ...fields, status: CLIENT_CLOSED_STATUS, durationMs: durationMs(startedAt), at: now() });
  };

  const listener = async (req: IncomingMessage, res: ServerResponse) => {
    const startedAt = process.hrtime.bigint();
    const requestId = requestIdFor(req.headers['x-request-id']);
    const url = originFormOf(req.url);
    const queryStart = url.indexOf('?');
    const path = queryStart >= 0 ? url.slice(0, queryStart) : url;
    const method = req.method ?? 'GET';
    (req.socket as { [LAST_PATH]?: string })[LAST_PATH] = path;
    const handler = options.handlers?.find((candidate) => candidate.owns(path));
    if (handler) {
      req.url = url;
      const outcome = await handOver(handler, req, res, requestId, options, maxBodyBytes, errorReplyFor(path));
      if (outcome === 'client-closed' || clientWentAway(req, res)) logClientClosed({ requestId, method, path, operationId: undefined }, startedAt);
      else if (handler.logged !== false) logRequest({ requestId, method, path, operationId: undefined, status: res.statusCode }, startedAt);
      return;
    }
    const mounted = apiFor(path);
    let reply: Reply;
    let operationId: string | undefined;
    let bodyAsked = false;
    const call: IncomingCall = {
      method,
      path,
      rawQuery: queryStart >= 0 ? url.slice(queryStart + 1) : '',
      headers: req.headers,
      readBody: once(() => {
        bodyAsked = true;
        return readCheckedBody(req, maxBodyBytes);
      }),
      requestId,
    };
    try {
      const duplicate = duplicateAuthorization(req);
      if (duplicate) throw duplicate;
      ({ reply, operationId } = await mounted.api.handle(call));
    } catch (error) {
      if (error instanceof ClientClosedError) {
        logClientClosed({ requestId, method, path, operationId }, startedAt);
        res.destroy();
        return;
      }
      reply = mounted.errorReply(error, requestId);
    }
    // A body the API did not read (a refusal, an operation without one) is read to its end before
    // the answer: so an answer never races the upload, and a body the client cuts off is the
    // client's doing on every path, whatever the answer would have been.
    if (!req.complete) {
      try {
        await (bodyAsked ? call.readBody() : drainBody(req, maxBodyBytes + DRAIN_LIMIT_BYTES));
      } catch (error) {
        if (error instanceof ClientClosedError) {
          logClientClosed({ requestId, method, path, operationId }, startedAt);
          res.destroy();
          return;
        }
        // Over the limit: the answer already decided is sent, and its connection closed by Node.
      }
    }
    if (clientWentAway(req, res)) {
      logClientClosed({ requestId, method, path, operationId }, startedAt);
      return;
    }
    try {
      reply = checkAgainstContract(reply, operationId, requestId, mounted, options);
      const timings = operationId === undefined ? undefined : options.phaseTimings;
      if (timings) {
        let mark = process.hrtime.bigint();
        const encoded = encodeReply(reply, requestId, options.isDraining?.() ?? false);
        mark = timings.add(operationId!, 'encode', mark);
        sendReply(res, reply.status, encoded, method);
        timings.add(operationId!, 'write', mark);
        timings.call(operationId!, startedAt);
      } else {
        writeReply(res, reply, requestId, method, options.isDraining?.() ?? false);
      }
    } catch (error) {
      // Nothing left to answer with: the reply could not be written (the client went away, or headers were sent).
      options.logger.error('reply not written', { requestId, operationId, error: error instanceof Error ? error.message : String(error) });
      res.destroy();
      return;
    }
    logRequest({ requestId, method, path, operationId, status: reply.status }, startedAt);
  };
  return Object.assign(listener, { errorReplyFor });
}

/**
 * The adapter's rules, then the handler. A JSON body is read and checked here, before the handler
 * sees it; any other body is the handler's to read (oidc-provider reads its forms from the stream).
 */
async function handOver(
  handler: MountedHandler,
  req: IncomingMessage,
  res: ServerResponse,
  requestId: string,
  options: HttpAdapterOptions,
  maxBodyBytes: number,
  errorReply: (error: unknown, requestId: string, body?: Buffer) => Reply,
): Promise<'answered' | 'client-closed'> {
  const draining = options.isDraining?.() ?? false;
  if (draining) res.setHeader('connection', 'close');
  let body: Buffer | undefined;
  try {
    const duplicate = duplicateAuthorization(req);
    if (duplicate) throw duplicate;
    if (handler.bodies === 'all' || isJsonMediaType(req.headers['content-type'])) body = await readCheckedBody(req, maxBodyBytes);
  } catch (error) {
    if (error instanceof ClientClosedError) {
      res.destroy();
      return 'client-closed';
    }
    const reply = errorReply(error, requestId, error instanceof JsonTooDeepError ? error.body : undefined);
    writeReply(res, reply, requestId, req.method ?? 'GET', draining);
    return 'answered';
  }
  try {
    await handler.handle(req, res, requestId, body);
    return 'answered';
  } catch (error) {
    if (error instanceof ClientClosedError || clientWentAway(req, res)) {
      res.destroy();
      return 'client-closed';
    }
    // A handler answers its own failures; this is the last resort, in the OAuth vocabulary, without details.
    options.logger.error('handler failed', { requestId, error: error instanceof Error ? error.message : String(error) });
    if (res.headersSent) {
      res.destroy();
      return 'answered';
    }
    // A database that cannot answer now is the declared 503 with Retry-After, in the handler's shape, never a 500.
    const outage = storeOutageFailure(error);
    if (outage) {
      writeReply(res, errorReply(outage, requestId), requestId, req.method ?? 'GET', draining);
      return 'answered';
    }
    const body = JSON.stringify({ error: 'server_error', error_description: `unexpected error; quote ${requestId}` });
    res.writeHead(500, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(body)), 'x-request-id': requestId });
    res.end(body);
    return 'answered';
  }
}

/** The message of the log line of a request whose client went away. */
export const CLIENT_CLOSED = 'client-closed';
/** nginx's status for it: no answer was sent, and the access line says why. */
export const CLIENT_CLOSED_STATUS = 499;

/**
 * Whether the client of a request went away before its answer was written: its body was cut off,
 * or its connection closed while the server worked. The one test every surface asks (the APIs
 * here, MCP, the OAuth server's error events), so they agree on what is the client's doing.
 */
export function clientWentAway(req: IncomingMessage, res?: ServerResponse): boolean {
  // Not `req.destroyed`: a body read to its end is destroyed too. The connection tells.
  const gone = req.socket?.destroyed === true || res?.destroyed === true;
  if (!gone) return false;
  // Its body never arrived whole (whatever a handler then answered into the closed connection), or the answer was not finished.
  return !req.complete || (res !== undefined && !res.writableEnded);
}

/** The path and query of a request target, also when a client sent the absolute form (`GET http://host/path`). */
function originFormOf(target: string | undefined): string {
  if (!target) return '/';
  if (target.startsWith('/')) return target;
  try {
    const url = new URL(target);
    return `${url.pathname}${url.search}`;
  } catch {
    return '/';
  }
}

/** A request with two `Authorization` headers: Node keeps only the first, and a proxy in front may have used another. */
export function duplicateAuthorization(req: IncomingMessage): PipelineFailure | undefined {
  if (countHeader(req.rawHeaders, 'authorization') <= 1) return undefined;
  return new PipelineFailure({ kind: 'malformed-request', reason: 'more than one Authorization header', code: 'duplicate-authorization' });
}

function countHeader(rawHeaders: string[], name: string): number {
  let count = 0;
  for (let index = 0; index < rawHeaders.length; index += 2) if (rawHeaders[index]!.toLowerCase() === name) count += 1;
  return count;
}

function isUnderPrefix(path: string, prefix: string): boolean {
  return prefix === '/' || path === prefix || path.startsWith(`${prefix}/`);
}

/** The reply, or the API's 500 in its place when it breaks the contract and validation is enforced (also for tool calls, which reach an API in the process). */
export function checkAgainstContract(
  reply: Reply,
  operationId: string | undefined,
  requestId: string,
  mounted: MountedApi,
  options: Pick<HttpAdapterOptions, 'responseValidation' | 'logger'>,
): Reply {
  if (options.responseValidation === 'off' || !operationId) return reply;
  const { headers, body } = serialize(reply, requestId);
  const problems = mounted.responseContract.check(operationId, {
    status: reply.status,
    headers,
    body: parseForCheck(body, headers['content-type']),
  });
  if (problems.length === 0) return reply;
  options.logger.error('response violates the contract', { requestId, operationId, problems });
  if (options.responseValidation === 'warn') return reply;
  return mounted.errorReply(new Error('response violates the contract'), requestId);
}

function parseForCheck(body: string | Buffer | undefined, contentType: string | undefined): unknown {
  if (body === undefined || body.length === 0) return undefined;
  const text = typeof body === 'string' ? body : body.toString('utf8');
  return contentType?.includes('json') ? JSON.parse(text) : text;
}

function serialize(reply: Reply, requestId: string): { headers: Record<string, string>; body: string | Buffer | undefined } {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.headers ?? {})) headers[name.toLowerCase()] = value;
  headers['x-request-id'] = requestId;
  if (reply.body === undefined) return { headers, body: undefined };
  if (typeof reply.body === 'string' || Buffer.isBuffer(reply.body)) return { headers, body: reply.body };
  headers['content-type'] ??= 'application/json; charset=utf-8';
  return { headers, body: JSON.stringify(reply.body) };
}

/** Writes a reply (also for the mounted handlers that answer in the API's own shape). */
export function writeReply(res: ServerResponse, reply: Reply, requestId: string, method: string, closeConnection: boolean): void {
  sendReply(res, reply.status, encodeReply(reply, requestId, closeConnection), method);
}

interface EncodedReply {
  headers: Record<string, string>;
  bytes: Buffer | undefined;
}

function encodeReply(reply: Reply, requestId: string, closeConnection: boolean): EncodedReply {
  const { headers, body } = serialize(reply, requestId);
  // While shutting down, a kept-alive connection must not take another request: the client would see it reset.
  if (closeConnection) headers.connection = 'close';
  const bytes = body === undefined || Buffer.isBuffer(body) ? body : Buffer.from(body);
  if (bytes) headers['content-length'] = String(bytes.length);
  return { headers, bytes };
}

function sendReply(res: ServerResponse, status: number, { headers, bytes }: EncodedReply, method: string): void {
  res.writeHead(status, headers);
  res.end(method === 'HEAD' ? undefined : bytes);
}

function once<T>(make: () => Promise<T>): () => Promise<T> {
  let result: Promise<T> | undefined;
  return () => (result ??= make());
}

/** Past the limit the rest of an upload is read and dropped (so the client can read the 413), up to this much. */
const DRAIN_LIMIT_BYTES = 16 * 1024 * 1024;

/** A JSON body refused for its depth (the `malformed-request` failure `json-too-deep`), with the body, for surfaces that answer by what it says (a JSON-RPC id). */
export class JsonTooDeepError extends PipelineFailure {
  constructor(readonly body: Buffer) {
    super({ kind: 'malformed-request', reason: `the JSON body nests deeper than ${MAX_JSON_DEPTH} levels`, code: 'json-too-deep' });
  }
}

/** The body under the adapter's rules: at most `maxBytes`, and a JSON body (by its Content-Type) nested at most MAX_JSON_DEPTH levels. */
export async function readCheckedBody(req: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  const body = await readBody(req, maxBytes);
  if (body !== undefined && isJsonMediaType(req.headers['content-type']) && nestsDeeperThan(body, MAX_JSON_DEPTH)) throw new JsonTooDeepError(body);
  return body;
}

/** Reads and drops a body nobody asked for, up to `limitBytes`; `ClientClosedError` when the client cuts it off. */
async function drainBody(req: IncomingMessage, limitBytes: number): Promise<void> {
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limitBytes) return;
    }
  } catch {
    if (!req.complete) throw new ClientClosedError();
  }
  if (!req.complete && (req.destroyed || req.socket?.destroyed === true)) throw new ClientClosedError();
}

/**
 * The request body, at most `maxBytes` (past it `PayloadTooLargeError`). A body that ends before
 * its declared length because the client closed the connection (cut off mid-way, or sent slowly
 * and then abandoned) rejects with `ClientClosedError`, never with the stream's own error.
 */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
      else if (size > maxBytes + DRAIN_LIMIT_BYTES) break;
    }
  } catch (error) {
    if (!req.complete) throw new ClientClosedError();
    throw error;
  }
  if (size > maxBytes) throw new PayloadTooLargeError(maxBytes);
  if (!req.complete && (req.destroyed || req.socket?.destroyed === true)) throw new ClientClosedError();
  return size === 0 ? undefined : Buffer.concat(chunks);
}
