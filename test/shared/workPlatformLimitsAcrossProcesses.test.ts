import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDemoData } from '../../src/demo/demoData.js';
import { openDatabase } from '../../src/store/database.js';
import { createWorkspaceStore } from '../../src/store/workspaces.js';
import { ContractClient, type CheckedResponse } from '../support/contractClient.js';
import { startServerProcess, stopServerProcesses } from '../support/serverProcess.js';
import { expectProblem, jsonHeaders } from '../support/workPlatform.js';

/**
 * Two server processes on one SQLite file count the /v1 limits in it together (whatever TEST_ENGINE
 * says, the processes serve the file: vitest.config.ts runs this file in the `api` project only).
 */
const windowMs = 60_000;

describe('two server processes on one database', () => {
  const children: ChildProcess[] = [];
  let dataDir: string;
  let databasePath: string;
  let fx: Awaited<ReturnType<typeof loadDemoData>>['workPlatform'];
  let clients: ContractClient[];

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'contract-api-wp-limits-'));
    databasePath = path.join(dataDir, 'app.db');
    const db = openDatabase(databasePath);
    fx = (await loadDemoData(db, Date.now)).workPlatform;
    await createWorkspaceStore(db).setWorkspaceLimits(fx.workspaceId, { writePerMinute: 4 });
    db.close();
    const servers = await Promise.all([startServerProcess({ DATABASE_PATH: databasePath }), startServerProcess({ DATABASE_PATH: databasePath })]);
    children.push(...servers.map((server) => server.child));
    clients = servers.map((server) => new ContractClient(server.url, 'work-platform', 'Problem'));
  });

  afterAll(async () => {
    const codes = await stopServerProcesses(children);
    rmSync(dataDir, { recursive: true, force: true });
    // SIGTERM shuts a server down gracefully, with exit code 0.
    expect(codes).toEqual(codes.map(() => 0));
  });

  it('share one write bucket and one monthly quota', async () => {
    // The servers count in real 60-second windows: do not start in the last three seconds of one.
    const intoWindow = Date.now() % windowMs;
    if (intoWindow > windowMs - 3_000) await new Promise((resolve) => setTimeout(resolve, windowMs - intoWindow + 50));

    const answers: CheckedResponse[] = [];
    for (let call = 0; call < 4; call++) {
      answers.push(
        await clients[call % 2]!.request('POST', '/v1/tasks', { headers: jsonHeaders(fx.tokens.all), body: JSON.stringify({ projectId: fx.projectId, title: `Shared ${call}` }) }),
      );
    }
    expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201, 201]);
    expect(answers.map((answer) => answer.headers['x-ratelimit-remaining'])).toEqual(['3', '2', '1', '0']);
    expect(new Set(answers.map((answer) => answer.headers['x-ratelimit-reset'])).size).toBe(1);
    const quotaLeft = answers.map((answer) => Number(answer.headers['x-quota-remaining']));
    expect(quotaLeft).toEqual([quotaLeft[0], quotaLeft[0]! - 1, quotaLeft[0]! - 2, quotaLeft[0]! - 3]);

    for (const client of clients) {
      const limited = await client.request('POST', '/v1/tasks', { headers: jsonHeaders(fx.tokens.all), body: JSON.stringify({ projectId: fx.projectId, title: 'One too many' }) });
      expect(expectProblem(limited, 429, 'rate-limited').rateLimit).toMatchObject({ class: 'write', limit: 4, tier: 'free' });
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    }
  });

  it('let exactly one of concurrent requests with one Idempotency-Key act, across both processes', async () => {
    const db = openDatabase(databasePath);
    try {
      await createWorkspaceStore(db).setWorkspaceLimits(fx.workspaceId, { writePerMinute: 1000 });
      const key = `two-processes-${Date.now()}`;
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, index) =>
          clients[index % 2]!.request('POST', '/v1/tasks', {
            headers: jsonHeaders(fx.tokens.all, { 'idempotency-key': key }),
            body: JSON.stringify({ projectId: fx.projectId, title: 'Across processes' }),
          }),
        ),
      );
      // Each answer is the one task, or (when the lock is held too long) 409 idempotency-key-in-use: never a second task.
      for (const answer of answers) {
        if (answer.status !== 201) expectProblem(answer, 409, 'conflict', 'idempotency-key-in-use');
      }
      const created = answers.filter((answer) => answer.status === 201);
      expect(created.length).toBeGreaterThan(0);
      expect(new Set(created.map((answer) => answer.body.id)).size).toBe(1);
      expect(created.filter((answer) => answer.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
      expect((db.prepare("SELECT count(*) AS count FROM tasks WHERE title = 'Across processes'").get() as { count: number }).count).toBe(1);
    } finally {
      db.close();
    }
  });
});
