// The analytics store in worker threads (src/expensiveCalls/analyticsWorkerPool.ts): the same
// answers as on the main thread, threads that end with the pool, a crashed thread replaced (its
// call a 500 that names nothing of it), and a pool that never keeps its process alive.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AnalyticsPoolClosedError, AnalyticsWorkerCrashedError, createAnalyticsWorkerPool, currentBundle, type AnalyticsWorkerPool } from '../../src/expensiveCalls/analyticsWorkerPool.js';
import { createAnalyticsStore, type AnalyticsRange } from '../../src/store/analytics.js';
import { analyticsWorkspace, getAnalytics } from '../support/analytics.js';
import { startTestApp } from '../support/testApp.js';
import { expectProblem, expectSuccess, liftCallLimits } from '../support/workPlatform.js';
import { makeDatabase, repoRoot, type TempDatabase } from '../store/factories.js';

const crashingWorker = new URL('../support/crashingAnalyticsWorker.ts', import.meta.url);
const DAY = 86_400_000;

let t: TempDatabase;
let pool: AnalyticsWorkerPool | undefined;
beforeEach(() => {
  t = makeDatabase();
});
afterEach(async () => {
  await pool?.close();
  pool = undefined;
  t.cleanup();
});

describe('the analytics worker pool', () => {
  it('answers every read as the store on the main thread does', async () => {
    const ws = await analyticsWorkspace(t.db, randomBytes(32));
    const start = Date.UTC(2026, 2, 1);
    for (let index = 0; index < 30; index += 1) {
      await ws.task({ createdAt: start + index * 7_200_000, dueOn: start + index * DAY, doneAt: index % 3 === 0 ? [start + index * DAY + 5_000] : [], priority: index % 2 ? 'HIGH' : 'LOW' });
      await ws.deal({ createdAt: start + index * 3_600_000, stage: index % 2 ? 'won' : 'lead', amountMinor: 2 ** 52 + index, currency: index % 3 ? 'EUR' : 'USD' });
    }
    const main = createAnalyticsStore(t.db);
    pool = createAnalyticsWorkerPool({ databasePath: t.path, threads: 2, busyTimeoutMs: 1_000 });
    const threaded = pool.store;
    for (const bucket of ['day', 'week', 'month'] as const) {
      const range: AnalyticsRange = { workspaceId: ws.workspaceId, from: start - DAY, to: start + 90 * DAY, bucket };
      for (const projectId of [undefined, ws.projectId]) {
        expect(await threaded.tasksCreated(range, projectId)).toEqual(await main.tasksCreated(range, projectId));
        expect(await threaded.tasksCompleted(range, projectId)).toEqual(await main.tasksCompleted(range, projectId));
        expect(await threaded.cycleTimes(range, projectId)).toEqual(await main.cycleTimes(range, projectId));
        expect(await threaded.overdue(range, projectId, start + 40 * DAY)).toEqual(await main.overdue(range, projectId, start + 40 * DAY));
      }
      expect(await threaded.pipeline(range, undefined)).toEqual(await main.pipeline(range, undefined));
    }
    expect(await threaded.hasProject(ws.workspaceId, ws.projectId)).toBe(true);
    expect(await threaded.hasUser(ws.workspaceId, 'usr_nobody')).toBe(false);
    // Two reads at once run on two threads.
    await Promise.all([threaded.hasProject(ws.workspaceId, ws.projectId), threaded.hasUser(ws.workspaceId, ws.ownerId)]);
    expect(pool.threads()).toBe(2);
  });

  it('ends its threads on close; a read after it fails', async () => {
    pool = createAnalyticsWorkerPool({ databasePath: t.path, threads: 1, busyTimeoutMs: 1_000 });
    expect(pool.threads()).toBe(0);
    await pool.store.hasUser('wks_x', 'usr_x');
    expect(pool.threads()).toBe(1);
    await pool.close();
    expect(pool.threads()).toBe(0);
    await expect(pool.store.hasUser('wks_x', 'usr_x')).rejects.toBeInstanceOf(AnalyticsPoolClosedError);
  });

  it('fails the read of a thread that dies, and replaces the thread', async () => {
    pool = createAnalyticsWorkerPool({ databasePath: t.path, threads: 1, busyTimeoutMs: 1_000, workerUrl: crashingWorker });
    const crashed = await pool.store.hasProject('wks_x', 'prj_crashNow').catch((error: unknown) => error);
    expect(crashed).toBeInstanceOf(AnalyticsWorkerCrashedError);
    expect(pool.threads()).toBe(0);
    expect(await pool.store.hasProject('wks_x', 'prj_other')).toBe(false);
    expect(pool.threads()).toBe(1);
  });

  it('never keeps its process alive: a process that reads and never closes the pool exits by itself', () => {
    const script = path.join(path.dirname(t.path), 'reads-and-leaves.mts');
    writeFileSync(
      script,
      [
        `import { createAnalyticsWorkerPool } from ${JSON.stringify(path.join(repoRoot, 'src/expensiveCalls/analyticsWorkerPool.ts'))};`,
        `const pool = createAnalyticsWorkerPool({ databasePath: ${JSON.stringify(t.path)}, threads: 2, busyTimeoutMs: 1000 });`,
        `console.log(await pool.store.hasUser('wks_x', 'usr_x'));`,
      ].join('\n'),
    );
    const run = spawnSync(process.execPath, ['--import', 'tsx', script], { cwd: repoRoot, encoding: 'utf8', timeout: 20_000 });
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('false');
    expect(run.status).toBe(0);
  });
});

describe('a crashed analytics thread over HTTP', () => {
  it('answers 500 internal naming nothing of the thread, the SQL or the files, and the next call is served', async () => {
    const app = await startTestApp({ analyticsWorkerUrl: crashingWorker, config: { expensiveCalls: { threads: 1, queued: 4, perWorkspace: 2, postgresConnections: undefined } } });
    try {
      if (app.engineKind !== 'sqlite') return;
      const fx = app.fixture.workPlatform;
      await liftCallLimits(app.store, fx.workspaceId);
      const query = { from: '2026-05-01', to: '2026-06-01' };
      const crashed = await getAnalytics(app.workPlatformClient, 'tasks/throughput', { ...query, projectId: 'prj_crashNow' }, fx.tokens.all);
      const body = expectProblem(crashed, 500, 'internal');
      expect(crashed.text).not.toMatch(/worker|thread|select|sqlite|\/tmp|\.ts|exit code/i);
      expect(body.detail).toBe('An unexpected error occurred. Quote the request id when reporting it.');
      expectSuccess(await getAnalytics(app.workPlatformClient, 'tasks/throughput', query, fx.tokens.all), 200);
      expect(app.app.expensiveCalls.pool!.threads()).toBe(1);
      await app.close();
      expect(app.app.expensiveCalls.pool!.threads()).toBe(0);
    } finally {
      await app.close();
    }
  });
});

describe('the TypeScript bundle a thread runs (npm start, tests)', () => {
  it('is made once for its files as they are, and made again, alone in its folder, once one of them changes', () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'analytics-bundle-'));
    try {
      const helper = path.join(folder, 'helper.ts');
      const source = path.join(folder, 'entry.ts');
      writeFileSync(helper, 'export const answer: number = 41;\n');
      writeFileSync(source, "import { answer } from './helper.ts';\nexport const value = answer + 1;\n");
      const first = currentBundle(source, folder, 'entry');
      expect(readFileSync(first, 'utf8')).toContain('answer + 1');
      const madeAt = statSync(first).mtimeMs;
      expect(currentBundle(source, folder, 'entry')).toBe(first);
      expect(statSync(first).mtimeMs).toBe(madeAt);

      // An imported file changes: its size and change time name another bundle.
      writeFileSync(helper, 'export const answer: number = 99;\n');
      const second = currentBundle(source, folder, 'entry');
      expect(second).not.toBe(first);
      expect(readFileSync(second, 'utf8')).toContain('99');
      expect(readdirSync(folder).filter((file) => file.endsWith('.mjs'))).toEqual([path.basename(second)]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
