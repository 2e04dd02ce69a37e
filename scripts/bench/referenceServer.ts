// A reference the bench measures the server against, in a process of its own: bare node:http or a
// bare Express 5 app answering GET /api/v1/portfolio with the given bytes, without auth,
// validation or limits, with the same content type and length headers as the server.
//   tsx scripts/bench/referenceServer.ts http|express BODY_FILE
import { readFileSync } from 'node:fs';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';

const [kind, bodyFile] = process.argv.slice(2);
if ((kind !== 'http' && kind !== 'express') || !bodyFile) {
  process.stderr.write('Usage: tsx scripts/bench/referenceServer.ts http|express BODY_FILE\n');
  process.exit(2);
}
const body = readFileSync(bodyFile);
const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length) };

let listener: RequestListener;
if (kind === 'http') {
  listener = (_request, response) => {
    response.writeHead(200, headers);
    response.end(body);
  };
} else {
  const app = express();
  app.disable('x-powered-by');
  // As the server: no ETag (Express would hash 34 KB per request, which the server does not do).
  app.set('etag', false);
  app.get('/api/v1/portfolio', (_request, response) => {
    response.set(headers).end(body);
  });
  listener = app;
}
const server = createServer(listener);
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`reference ${kind} listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
