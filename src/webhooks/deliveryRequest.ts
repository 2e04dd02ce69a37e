import http from 'node:http';
import https from 'node:https';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import type { AttemptError } from '../store/webhookDeliveries.js';
import type { ResolvedAddress } from './targetGuard.js';

/**
 * One delivery attempt over the wire: POST the exact payload bytes with the given headers to the
 * URL, connecting only to `addresses` (already resolved and checked by the target guard: the
 * request never resolves the name again, so a DNS answer that changes between the check and the
 * connection cannot reach a private address). For https the TLS server name (SNI) and the
 * certificate check use the URL's host name, not the address connected to. Redirects are never
 * followed. The outcome is decided by the status line within `timeoutMs` (connect, send, status
 * and headers); at most `maxResponseBytes` of the answer's body are then read and dropped.
 */

export const DELIVERY_TIMEOUT_MS = 10_000;
export const MAX_RESPONSE_BYTES = 64 * 1024;
/**
 * How long an idle kept-alive connection waits for the next attempt to the same target: under the
 * 5-second keep-alive timeout of Node's own servers (and most others), so that we hang up before
 * the subscriber does. A shorter `Keep-Alive: timeout=` hint from the subscriber is honoured.
 */
export const IDLE_CONNECTION_MS = 4_000;
/** Targets whose agent is kept; beyond this the least recently used one is dropped (its idle connections close on their own). */
const AGENTS_KEPT = 1_000;

export interface DeliveryRequest {
  url: URL;
  addresses: ResolvedAddress[];
  headers: Record<string, string>;
  body: Buffer;
  timeoutMs?: number;
  maxResponseBytes?: number;
  /** Extra trusted certificate authorities (tests with a local TLS receiver). */
  ca?: string | Buffer | Array<string | Buffer>;
  /** Connections kept alive between attempts (see {@link createDeliveryAgents}); a new connection per attempt when absent. */
  agents?: DeliveryAgents;
  /** Called once reading the answer's body has stopped (its end, the limit, the deadline or an error), with the bytes read. */
  onBodyDone?: (bytesRead: number) => void;
}

export interface DeliveryResponse {
  statusCode: number | null;
  retryAfter: string | null;
  error: AttemptError | null;
  /** Until the status line and headers arrived, or until the failure. */
  durationMs: number;
}

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED', 'EADDRNOTAVAIL', 'ETIMEDOUT']);
/** OpenSSL's certificate verification codes, as Node reports them. */
const CERTIFICATE_CODES = new Set([
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'HOSTNAME_MISMATCH',
  'INVALID_CA',
  'PATH_LENGTH_EXCEEDED',
  'INVALID_PURPOSE',
]);

class DeliveryTimeout extends Error {}

// Node's messages name the resolved address ("connect ECONNREFUSED 203.0.113.5:443"); the delivery
// log is shown to the tenant, who never sees what its host name resolved to.
const IPV4_WITH_PORT = /\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b/g;
const IPV6_WITH_PORT = /(?<![\w:])\[?(?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{0,4}\]?(?::\d+)?/gi;

function messageOf(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  const redacted = error.message.replace(IPV4_WITH_PORT, '<target>').replace(IPV6_WITH_PORT, '<target>');
  const text = redacted.length > 300 ? `${redacted.slice(0, 300)}…` : redacted;
  return code && !text.includes(code) ? `${code}: ${text}` : text;
}

/** Maps a request failure onto the contract's attempt error codes. */
export function classifyRequestError(error: Error, { tls, timeoutMs }: { tls: boolean; timeoutMs: number }): AttemptError {
  if (error instanceof DeliveryTimeout) return { code: 'timeout', message: `no status within ${timeoutMs} ms` };
  const code = (error as NodeJS.ErrnoException).code ?? '';
  if (tls && (CERTIFICATE_CODES.has(code) || code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL') || code === 'EPROTO' || /\bSSL\b|TLS/.test(error.message))) {
    return { code: 'tls-failure', message: messageOf(error) };
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return { code: 'dns-failure', message: messageOf(error) };
  if (CONNECTION_CODES.has(code) || error.message === 'socket hang up') return { code: 'connection-failed', message: messageOf(error) };
  return { code: 'connection-failed', message: messageOf(error) };
}

export interface DeliveryAgents {
  /** The keep-alive agent of one target: its origin and the exact set of checked addresses it may connect to. */
  agentFor(url: URL, addresses: readonly ResolvedAddress[]): http.Agent;
  /** Closes every connection, in use or idle (once no attempt is in flight). */
  destroy(): void;
}

/**
 * Keep-alive agents, one per origin and set of checked addresses: a connection is reused only for
 * a target that resolved to the very addresses it was opened to, so a kept connection never
 * carries an attempt past the target check of that attempt's own resolution.
 */
export function createDeliveryAgents(): DeliveryAgents {
  const agents = new Map<string, http.Agent>();
  return {
    agentFor(url, addresses) {
      const key = `${url.protocol}//${url.host} ${addresses
        .map(({ address }) => address)
        .sort()
        .join(' ')}`;
      let agent = agents.get(key);
      if (agent) {
        agents.delete(key);
      } else {
        const options: http.AgentOptions = { keepAlive: true, timeout: IDLE_CONNECTION_MS, scheduling: 'lifo' };
        agent = url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
        // Not destroyed: that would end attempts in flight on it. Its idle connections time out.
        if (agents.size >= AGENTS_KEPT) agents.delete(agents.keys().next().value!);
      }
      agents.set(key, agent);
      return agent;
    },
    destroy() {
      for (const agent of agents.values()) agent.destroy();
      agents.clear();
    },
  };
}

const RESET_CODES = new Set(['ECONNRESET', 'EPIPE']);

export async function sendDeliveryRequest(request: DeliveryRequest): Promise<DeliveryResponse> {
  const started = performance.now();
  const timeoutMs = request.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const agent = request.agents?.agentFor(request.url, request.addresses);
  const first = await sendOnce(request, agent ?? false, timeoutMs);
  // A kept-alive connection the subscriber closed as we reused it: the request never reached an
  // answer on it. Once more on a new connection, within what is left of the same deadline.
  if (first.resetOnReusedConnection) {
    const left = Math.floor(timeoutMs - (performance.now() - started));
    if (left > 0) {
      const second = await sendOnce(request, false, left);
      return { ...second.response, durationMs: Math.round(performance.now() - started) };
    }
  }
  return { ...first.response, durationMs: Math.round(performance.now() - started) };
}

function sendOnce(
  request: DeliveryRequest,
  agent: http.Agent | false,
  timeoutMs: number,
): Promise<{ response: Omit<DeliveryResponse, 'durationMs'>; resetOnReusedConnection: boolean }> {
  const maxResponseBytes = request.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  const { url, addresses } = request;
  const tls = url.protocol === 'https:';
  if (!tls && url.protocol !== 'http:') throw new TypeError(`not an http(s) URL: ${url.protocol}`);
  if (addresses.length === 0) throw new TypeError('no address to connect to');
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;

  // The connection's lookup answers with the checked addresses only. Node asks with `all: true`
  // when it races the families (autoSelectFamily), with a single answer otherwise.
  const pinnedLookup = (
    _host: string,
    options: LookupOptions,
    callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
    const list = wanted.length > 0 ? wanted : addresses;
    if (options.all) callback(null, list.map(({ address, family }) => ({ address, family })));
    else callback(null, list[0]!.address, list[0]!.family);
  };

  const options: https.RequestOptions = {
    method: 'POST',
    host: hostname,
    port: url.port === '' ? (tls ? 443 : 80) : Number(url.port),
    path: `${url.pathname}${url.search}`,
    headers: { ...request.headers, 'content-length': String(request.body.length) },
    agent,
    // An IP literal is connected to as is (Node never looks it up); a name only through the pinned lookup.
    ...(isIP(hostname) === 0 ? { lookup: pinnedLookup as unknown as https.RequestOptions['lookup'] } : {}),
    ...(tls && request.ca !== undefined ? { ca: request.ca } : {}),
  };

  return new Promise((resolve) => {
    let settled = false;
    const finish = (response: Omit<DeliveryResponse, 'durationMs'>, resetOnReusedConnection = false) => {
      if (settled) return;
      settled = true;
      resolve({ response, resetOnReusedConnection });
    };
    const req = (tls ? https : http).request(options, (res) => {
      const retryAfter = res.headers['retry-after'];
      finish({ statusCode: res.statusCode ?? null, retryAfter: typeof retryAfter === 'string' ? retryAfter : null, error: null });
      // The body is ignored: read at most maxResponseBytes of it within the same deadline, then hang up.
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read >= maxResponseBytes) {
          clearTimeout(deadline);
          res.destroy();
        }
      });
      res.on('end', () => clearTimeout(deadline));
      res.on('error', () => clearTimeout(deadline));
      res.on('close', () => {
        clearTimeout(deadline);
        request.onBodyDone?.(read);
      });
    });
    const deadline = setTimeout(() => req.destroy(new DeliveryTimeout()), timeoutMs);
    req.on('error', (error) => {
      clearTimeout(deadline);
      const code = (error as NodeJS.ErrnoException).code ?? '';
      const reset = req.reusedSocket && !(error instanceof DeliveryTimeout) && RESET_CODES.has(code);
      finish({ statusCode: null, retryAfter: null, error: classifyRequestError(error, { tls, timeoutMs }) }, reset);
    });
    req.end(request.body);
  });
}
