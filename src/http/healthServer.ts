// The standalone webhook worker's probe listener (WORKER_HEALTH_PORT): /livez and /readyz as the
// API server answers them (healthEndpoints.ts), on a port of its own, and nothing else.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { requestIdFor, type MountedHandler } from './httpAdapter.js';

export interface HealthServer {
  /** e.g. `http://127.0.0.1:3100` */
  url: string;
  close(): Promise<void>;
}

export async function startHealthServer(endpoints: MountedHandler, port: number, host: string): Promise<HealthServer> {
  const server: Server = createServer((req, res) => {
    const requestId = requestIdFor(req.headers['x-request-id']);
    const path = (req.url ?? '/').split('?')[0]!;
    if (!endpoints.owns(path)) {
      const body = JSON.stringify({ error: 'not_found', paths: ['/livez', '/readyz'] });
      res.writeHead(404, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(body)), 'x-request-id': requestId });
      res.end(body);
      return;
    }
    endpoints.handle(req, res, requestId).catch(() => res.destroy());
  });
  // Probes only: a slow or idle client is not kept.
  server.headersTimeout = 5_000;
  server.requestTimeout = 5_000;
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown === '0.0.0.0' || shown === '[::]' ? '127.0.0.1' : shown}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
