// `npm run worker`'s probe listener (WORKER_HEALTH_PORT), on the real worker as a child process.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';
import { createProjectStore } from '../../src/store/projects.js';
import { loadSealingBox } from '../../src/auth/secretBox.js';
import { makeToken, makeWorkspace } from '../store/workPlatformFactories.js';
import { liftCallLimits } from '../support/workPlatform.js';
import {
  makeDemoDatabaseFile,
  startServerProcess,
  startWorkerProcess,
  stopServerProcesses,
  type DemoDatabaseFile,
  type ServerProcess,
  type WorkerProcess,
} from '../support/serverProcess.js';
import { insertSubscription, startReceiver, waitFor, type Receiver } from './deliveryFixtures.js';

let database: DemoDatabaseFile;
const started: (WorkerProcess | ServerProcess)[] = [];
let receiver: Receiver | undefined;
const dir = mkdtempSync(path.join(tmpdir(), 'worker-health-'));

beforeAll(async () => {
  database = await makeDemoDatabaseFile('contract-api-worker-health-');
});

afterAll(async () => {
  await stopServerProcesses(started.map((worker) => worker.child));
  database?.remove();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function start(env: Record<string, string>): Promise<WorkerProcess> {
  const worker = await startWorkerProcess({ DATABASE_PATH: database.databasePath, HOST: '127.0.0.1', ...env });
  started.push(worker);
  return worker;
}

describe('npm run worker with WORKER_HEALTH_PORT', () => {
  it('answers /livez and /readyz on its own port, and nothing else', async () => {
    const worker = await start({ WORKER_HEALTH_PORT: '0' });
    const url = /health: +(http:\/\/127\.0\.0\.1:\d+)\/livez/.exec(worker.output())?.[1];
    expect(url, worker.output()).toBeDefined();

    const live = await fetch(`${url}/livez`);
    expect(live.status).toBe(200);
    expect(live.headers.get('cache-control')).toBe('no-store');
    expect(live.headers.get('x-request-id')).toMatch(/^req_/);
    expect(await live.json()).toEqual({ status: 'live' });

    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok', shutdown: 'ok' }, oldestDueDeliveryAgeSeconds: null });

    expect((await fetch(`${url}/v1/tasks`)).status).toBe(404);
    expect(await stopServerProcesses([worker.child])).toEqual([0]);
  }, 60_000);

  it('opens no listener without it', async () => {
    const worker = await start({ WORKER_HEALTH_PORT: '' });
    expect(worker.output()).toMatch(/health: +no probe listener \(set WORKER_HEALTH_PORT\)/);
    expect(await stopServerProcesses([worker.child])).toEqual([0]);
  }, 60_000);

  it('answers /readyz 503 from SIGTERM on while an attempt finishes, /livez 200 to the end', async () => {
    receiver = await startReceiver();
    // The receiver holds the attempt (for up to its 10-second budget): the worker is stopping all that time.
    receiver.answer = () => 'hang';
    const env = { DATABASE_PATH: path.join(dir, 'app.db'), WEBHOOK_ALLOW_LOOPBACK: '1', WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64url'), DEMO_DATA: 'off' };
    const setup = openDatabase(env.DATABASE_PATH);
    const workspace = await makeWorkspace(setup);
    await liftCallLimits(setup, workspace.workspaceId);
    const { token } = await makeToken(setup, workspace, { scopes: ['tasks:write'] });
    const projectId = (await createProjectStore(setup).createProject(workspace.workspaceId, { name: 'Probes' }, workspace.actor)).id;
    insertSubscription(setup, { workspaceId: workspace.workspaceId, url: receiver.url, eventTypes: ['task.created'] }, loadSealingBox({ webhookSecretKey: env.WEBHOOK_SECRET_KEY, dataDirectory: dir }));
    setup.close();

    const worker = await startWorkerProcess({ ...env, HOST: '127.0.0.1', WORKER_HEALTH_PORT: '0' });
    started.push(worker);
    const url = /health: +(http:\/\/127\.0\.0\.1:\d+)\/livez/.exec(worker.output())![1]!;
    const server = await startServerProcess({ ...env, WEBHOOK_WORKER: 'off' });
    started.push(server);
    const created = await fetch(`${server.url}/v1/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ projectId, title: 'Held by its receiver' }),
    });
    expect(created.status).toBe(201);
    await waitFor(() => receiver!.received.length === 1, 'the attempt to reach the receiver', 20_000);

    const exit = new Promise<number | null>((resolve) => worker.child.once('exit', (code) => resolve(code)));
    worker.child.kill('SIGTERM');
    await waitFor(() => worker.output().includes('SIGTERM received'), 'the worker to take the signal', 20_000);
    const stopping = await fetch(`${url}/readyz`);
    expect(stopping.status).toBe(503);
    expect(stopping.headers.get('content-type')).toBe('application/problem+json');
    expect(((await stopping.json()) as { checks: unknown }).checks).toEqual({ database: 'ok', migrations: 'ok', shutdown: 'fail' });
    expect((await fetch(`${url}/livez`)).status).toBe(200);
    // Still in flight: the worker has not stopped. Once answered, the attempt is recorded and the worker stops.
    expect(worker.output()).not.toContain('Stopped.');
    receiver.releaseHeld();
    expect(await exit).toBe(0);
  }, 60_000);
});
