// GET /livez and GET /readyz: the probes of load balancers and orchestrators. Answered before
// either API's pipeline (no authentication, no rate limit, no quota, no request log line: a probe
// every few seconds per instance would drown the log), outside both APIs' prefixes, and not in
// their contracts: they are the operator's, documented in docs/operations.md ("Health and drain").
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readiness } from '../health/readiness.js';
import type { MountedHandler } from './httpAdapter.js';

export const LIVENESS_PATH = '/livez';
export const READINESS_PATH = '/readyz';

export interface HealthEndpointOptions {
  /** Omitted: only /livez is answered. */
  readiness?: Readiness;
  /** The /v1 problem type base (ERROR_TYPE_BASE): the 503 is `<base>/not-ready`. */
  problemTypeBase: string;
}

function write(res: ServerResponse, req: IncomingMessage, status: number, headers: Record<string, string>, body: unknown): void {
  const bytes = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  res.writeHead(status, {
    ...headers,
    'cache-control': 'no-store',
    ...(bytes ? { 'content-length': String(bytes.length) } : { 'content-length': '0' }),
  });
  res.end(req.method === 'HEAD' ? undefined : bytes);
}

export function createHealthEndpoints(options: HealthEndpointOptions): MountedHandler & { logged: false } {
  const paths = new Set([LIVENESS_PATH, ...(options.readiness ? [READINESS_PATH] : [])]);
  const notReadyType = `${options.problemTypeBase.replace(/\/+$/, '')}/not-ready`;
  return {
    logged: false,
    owns: (path) => paths.has(path),
    async handle(req, res, requestId) {
      const path = req.url!.split('?')[0]!;
      const headers = { 'x-request-id': requestId };
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        write(res, req, 405, { ...headers, allow: 'GET, HEAD' }, undefined);
        return;
      }
      const json = { ...headers, 'content-type': 'application/json; charset=utf-8' };
      if (path === LIVENESS_PATH || !options.readiness) {
        write(res, req, 200, json, { status: 'live' });
        return;
      }
      const { ready, checks, oldestDueDeliveryAgeSeconds } = await options.readiness.report();
      if (ready) {
        write(res, req, 200, json, { status: 'ready', checks, oldestDueDeliveryAgeSeconds });
        return;
      }
      const failed = Object.entries(checks)
        .filter(([, state]) => state === 'fail')
        .map(([name]) => name);
      // RFC 9457: the failed checks by name only, never a host or an error text (those are logged).
      write(res, req, 503, { ...headers, 'content-type': 'application/problem+json' }, {
        type: notReadyType,
        title: 'Not ready',
        status: 503,
        detail: `Not ready: ${failed.join(', ')} failed.`,
        requestId,
        checks,
        oldestDueDeliveryAgeSeconds,
      });
    },
  };
}
