// Another process holds the database's write lock (BEGIN IMMEDIATE, as a long import would) while
// the real server runs as its own process: reads keep answering, writes answer a declared 503
// after a short retry that does not freeze the server, and nothing is half-written.
import { setTimeout as wait } from 'node:timers/promises';
import type BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DemoFixture } from '../../src/demo/demoData.js';
import { openDatabase } from '../../src/store/database.js';
import { ContractClient } from '../support/contractClient.js';
import { makeDemoDatabaseFile, startServerProcess, stopServerProcesses, type ServerProcess, type DemoDatabaseFile } from '../support/serverProcess.js';
import { bearer } from '../support/testApp.js';

let database: DemoDatabaseFile;
let databasePath: string;
let fixture: DemoFixture;
let server: ServerProcess;
let workPlatform: ContractClient;
let portfolio: ContractClient;
let locker: BetterSqlite3.Database;

beforeAll(async () => {
  database = await makeDemoDatabaseFile('contract-api-lock-');
  ({ databasePath, fixture } = database);
  server = await startServerProcess({ DATABASE_PATH: databasePath, DEMO_DATA: 'off', WEBHOOK_WORKER: 'off' });
  workPlatform = new ContractClient(server.url, 'work-platform', 'Problem');
  portfolio = new ContractClient(server.url);
  locker = openDatabase(databasePath);
});

afterAll(async () => {
  if (locker?.inTransaction) locker.exec('ROLLBACK');
  locker?.close();
  if (server) expect(await stopServerProcesses([server.child])).toEqual([0]);
  database?.remove();
});

const token = () => bearer(fixture.workPlatform.tokens.all);
const tasksTitled = (title: string) => locker.prepare('SELECT count(*) FROM tasks WHERE title = ?').pluck().get(title) as number;

function createTask(title: string, key: string) {
  return workPlatform.request('POST', '/v1/tasks', {
    headers: { ...token(), 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ projectId: fixture.workPlatform.projectId, title }),
  });
}

describe('while another process holds the write lock', () => {
  it('answers reads at once, refuses a write with 503 and Retry-After, writes nothing, and creates once on a retry', async () => {
    locker.exec('BEGIN IMMEDIATE');
    try {
      const tasks = await workPlatform.get('/v1/tasks?limit=5', token());
      expect(tasks.status).toBe(200);
      expect(tasks.headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
      expect((await portfolio.get('/api/v1/portfolio', bearer(fixture.portfolio.apiKey))).status).toBe(200);
      expect((await portfolio.get('/api/v1/posts?limit=2', bearer(fixture.portfolio.apiKey))).status).toBe(200);

      // The write retries without blocking: a call that needs no database is answered first.
      const order: string[] = [];
      const write = createTask('Written under a foreign lock', 'lock-key-1').then((response) => {
        order.push('write');
        return response;
      });
      const download = workPlatform.get('/v1/openapi.json').then((response) => {
        order.push('download');
        return response;
      });
      const [refused, spec] = await Promise.all([write, download]);
      expect(order).toEqual(['download', 'write']);
      expect(spec.status).toBe(200);
      expect(refused.status).toBe(503);
      expect(refused.headers['content-type']).toBe('application/problem+json');
      expect(refused.body.type).toMatch(/\/unavailable$/);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(locker.inTransaction).toBe(true);
    } finally {
      locker.exec('ROLLBACK');
    }
    expect(tasksTitled('Written under a foreign lock')).toBe(0);

    const created = await createTask('Written under a foreign lock', 'lock-key-1');
    expect(created.status).toBe(201);
    const replayed = await createTask('Written under a foreign lock', 'lock-key-1');
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.body.id).toBe(created.body.id);
    expect(tasksTitled('Written under a foreign lock')).toBe(1);
  });

  it('adds the calls admitted during the lock to the shared count once the lock is released', async () => {
    const bucket = `wp:${fixture.workPlatform.workspaceId}:read`;
    const shared = () => (locker.prepare('SELECT coalesce(max(count), 0) FROM rate_limit_counters WHERE bucket = ?').pluck().get(bucket) as number);
    // A counted call first, so the window the rest fall in is known.
    let remaining = Number((await workPlatform.get('/v1/tasks?limit=1', token())).headers['x-ratelimit-remaining']);
    const before = shared();
    locker.exec('BEGIN IMMEDIATE');
    try {
      for (let call = 0; call < 3; call += 1) {
        const response = await workPlatform.get('/v1/tasks?limit=1', token());
        expect(response.status).toBe(200);
        const now = Number(response.headers['x-ratelimit-remaining']);
        // Across a window boundary the count starts again; within one it keeps falling.
        if (now < remaining) expect(now).toBe(remaining - 1);
        remaining = now;
      }
      expect(shared()).toBe(before);
    } finally {
      locker.exec('ROLLBACK');
    }
    // The server tries the database again 250 ms after it found it locked (real time, in its own
    // process); the first call it then counts writes what it owes.
    let after = shared();
    for (let attempt = 0; attempt < 40 && after < before + 4; attempt += 1) {
      await wait(50);
      await workPlatform.get('/v1/tasks?limit=1', token());
      after = shared();
    }
    expect(after).toBeGreaterThanOrEqual(before + 4);
  });
});
