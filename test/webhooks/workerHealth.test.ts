// `npm run worker`'s probe listener (WORKER_HEALTH_PORT), on the real worker as a child process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDemoDatabaseFile, startWorkerProcess, stopServerProcesses, type DemoDatabaseFile, type WorkerProcess } from '../support/serverProcess.js';

let database: DemoDatabaseFile;
const started: WorkerProcess[] = [];

beforeAll(async () => {
  database = await makeDemoDatabaseFile('contract-api-worker-health-');
});

afterAll(async () => {
  await stopServerProcesses(started.map((worker) => worker.child));
  database?.remove();
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
});
