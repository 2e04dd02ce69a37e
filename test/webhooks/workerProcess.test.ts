import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';
import { createProjectStore } from '../../src/store/projects.js';
import { loadSealingBox } from '../../src/auth/secretBox.js';
import { runWorkerProcess, startServerProcess, startWorkerProcess, stopServerProcesses } from '../support/serverProcess.js';
import { liftCallLimits } from '../support/workPlatform.js';
import { makeToken, makeWorkspace } from '../store/workPlatformFactories.js';
import { attemptsOf, deliveriesOf, insertSubscription, startReceiver, waitFor, type Receiver } from './deliveryFixtures.js';

/** `npm run worker`: its help, its banner, several workers and a server on one database, graceful stop. */

const dir = mkdtempSync(path.join(tmpdir(), 'webhook-workers-'));
const children: ChildProcess[] = [];
let receiver: Receiver | undefined;
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('npm run worker', () => {
  it('prints its help, started as npm runs it (scripts/runTranspiled.mjs)', async () => {
    const result = await runWorkerProcess(['--help']);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^Usage: npm run worker/);
    expect(result.stdout).toContain('DATABASE_PATH');
    expect(result.stdout).toContain('WEBHOOK_SECRET_KEY');
  });

  it('refuses to start, exit 1, when WEBHOOK_SECRET_KEY cannot open the stored secrets', async () => {
    const databasePath = path.join(dir, 'wrong-key.db');
    const setup = openDatabase(databasePath);
    const workspace = await makeWorkspace(setup);
    const sealedWith = loadSealingBox({ webhookSecretKey: randomBytes(32).toString('base64url'), dataDirectory: dir });
    insertSubscription(setup, { workspaceId: workspace.workspaceId, url: 'https://hooks.example.com/in' }, sealedWith);
    setup.close();
    const result = await runWorkerProcess([], { DATABASE_PATH: databasePath, WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64url') });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/Start-up failed: WEBHOOK_SECRET_KEY cannot open the stored webhook signing secrets/);
    expect(result.stdout).not.toContain('started');
  });

  it('two worker processes and a server on one database send every attempt exactly once, and stop gracefully on SIGTERM', async () => {
    receiver = await startReceiver();
    // Slow enough answers (12 in flight per worker: its cap for one target) that no single worker drains the queue before
    // the others' next poll: all three take part.
    receiver.answer = () => ({ status: 204, delayMs: 250 });
    const databasePath = path.join(dir, 'app.db');
    const env = {
      DATABASE_PATH: databasePath,
      WEBHOOK_ALLOW_LOOPBACK: '1',
      WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64url'),
      DEMO_DATA: 'off',
    };
    const setup = openDatabase(databasePath);
    const workspace = await makeWorkspace(setup);
    await liftCallLimits(setup, workspace.workspaceId);
    const { token } = await makeToken(setup, workspace, { scopes: ['tasks:write'] });
    const projectId = (await createProjectStore(setup).createProject(workspace.workspaceId, { name: 'Workers' }, workspace.actor)).id;
    const secretBox = loadSealingBox({ webhookSecretKey: env.WEBHOOK_SECRET_KEY, dataDirectory: dir });
    const subscription = insertSubscription(setup, { workspaceId: workspace.workspaceId, url: receiver.url, eventTypes: ['task.created'] }, secretBox);
    setup.close();

    const workers = await Promise.all([startWorkerProcess(env), startWorkerProcess(env)]);
    children.push(...workers.map((w) => w.child));
    expect(workers[0]!.output()).toContain(`database:      ${databasePath}`);
    const server = await startServerProcess({ ...env, WEBHOOK_WORKER: 'on' });
    children.push(server.child);

    const N = 80;
    for (let batch = 0; batch < N / 10; batch += 1) {
      const statuses = await Promise.all(
        Array.from({ length: 10 }, (_, index) =>
          fetch(`${server.url}/v1/tasks`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ projectId, title: `task ${batch * 10 + index}` }),
          }).then((response) => response.status),
        ),
      );
      expect(statuses.every((status) => status === 201)).toBe(true);
    }

    const db = openDatabase(databasePath);
    await waitFor(
      () => deliveriesOf(db, subscription.id).length === N && deliveriesOf(db, subscription.id).every((d) => d.status === 'SUCCEEDED'),
      'every delivery to succeed',
      20_000,
      50,
    );
    const perDelivery = new Map<string, number>();
    for (const r of receiver.received) {
      const id = String(r.headers['svc-delivery-id']);
      perDelivery.set(id, (perDelivery.get(id) ?? 0) + 1);
    }
    expect(perDelivery.size).toBe(N);
    expect([...perDelivery.entries()].filter(([, count]) => count !== 1)).toEqual([]);
    for (const delivery of deliveriesOf(db, subscription.id)) expect(attemptsOf(db, delivery.id)).toHaveLength(1);
    db.close();

    // The worker processes took part (each logs the attempts it made, with its id).
    const deliveredBy = workers.map((w) => w.output().split('\n').filter((line) => line.includes('webhook delivered') && line.includes(`"workerId":"${w.workerId}"`)).length);
    expect(deliveredBy.reduce((sum, count) => sum + count, 0)).toBeGreaterThan(0);
    expect(deliveredBy.reduce((sum, count) => sum + count, 0)).toBeLessThanOrEqual(N);

    const exits = await stopServerProcesses(workers.map((w) => w.child));
    expect(exits).toEqual([0, 0]);
    for (const w of workers) expect(w.output()).toMatch(/SIGTERM received[\s\S]*webhook worker stopped[\s\S]*Stopped\./);
    expect(await stopServerProcesses([server.child])).toEqual([0]);
  }, 60_000);
});
