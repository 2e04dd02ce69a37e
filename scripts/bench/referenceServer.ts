// A reference the bench measures the server against, in a process of its own, without auth,
// validation, limits, idempotency or events:
//   http|express BODY_FILE     bare node:http or a bare Express 5 app answering GET /api/v1/portfolio
//                              with the given bytes and the server's content type and length headers;
//   http-work BODY_FILE MICROSECONDS
//                              bare node:http that first spins the CPU for that long on each request:
//                              a stand-in for a pipeline of that cost (scripts/bench/pipelineCeiling.ts);
//   express-insert DATABASE_PATH WORKSPACE_ID
//                              a bare Express 5 app answering POST /v1/tasks with the same insert into
//                              the same SQLite file through better-sqlite3 (one prepared statement),
//                              201 and the task as JSON, as the server does.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import express from 'express';
import { printHelpWhenAsked } from './helpWhenAsked.js';

printHelpWhenAsked(import.meta.filename);

const USAGE = 'Usage: tsx scripts/bench/referenceServer.ts http|express BODY_FILE | http-work BODY_FILE MICROSECONDS | express-insert DATABASE_PATH WORKSPACE_ID\n';
const [kind, first, second] = process.argv.slice(2);

function portfolioListener(bodyFile: string, viaExpress: boolean, workNanoseconds = 0n): RequestListener {
  const body = readFileSync(bodyFile);
  const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length) };
  if (!viaExpress) {
    return (_request, response) => {
      if (workNanoseconds > 0n) {
        const until = process.hrtime.bigint() + workNanoseconds;
        while (process.hrtime.bigint() < until);
      }
      response.writeHead(200, headers);
      response.end(body);
    };
  }
  const app = express();
  app.disable('x-powered-by');
  // As the server: no ETag (Express would hash 34 KB per request, which the server does not do).
  app.set('etag', false);
  app.get('/api/v1/portfolio', (_request, response) => {
    response.set(headers).end(body);
  });
  return app;
}

function insertListener(databasePath: string, workspaceId: string): RequestListener {
  const db = new Database(databasePath);
  // The server's own settings (src/store/database.ts): a commit waits for no fsync of the WAL.
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  const insert = db.prepare(
    `INSERT INTO tasks (id, workspace_id, project_id, title, status, priority, priority_rank, due_on, assignee_id, version, created_at, updated_at, completed_at)
     VALUES (?, ?, ?, ?, 'TODO', 'MEDIUM', 2, NULL, NULL, 1, ?, ?, NULL)`,
  );
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(express.json());
  app.post('/v1/tasks', (request, response) => {
    const { projectId, title } = request.body as { projectId: string; title: string };
    const at = Date.now();
    const id = `tsk_${randomBytes(12).toString('base64url')}`;
    insert.run(id, workspaceId, projectId, title, at, at);
    const createdAt = new Date(at).toISOString();
    response.status(201).json({ id, projectId, title, status: 'TODO', priority: 'MEDIUM', dueOn: null, assigneeId: null, version: 1, createdAt, updatedAt: createdAt, completedAt: null });
  });
  return app;
}

let listener: RequestListener;
if ((kind === 'http' || kind === 'express') && first) listener = portfolioListener(first, kind === 'express');
else if (kind === 'http-work' && first && second && /^\d+$/.test(second)) listener = portfolioListener(first, false, BigInt(second) * 1000n);
else if (kind === 'express-insert' && first && second) listener = insertListener(first, second);
else {
  process.stderr.write(USAGE);
  process.exit(2);
}
const server = createServer(listener);
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`reference ${kind} listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
