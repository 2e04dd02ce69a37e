// A replay after the server key that seals stored idempotent answers (WEBHOOK_SECRET_KEY) was
// replaced, against the real server as a child process: the answer cannot be opened any more, so
// the repeat gets the declared 409 `idempotent-answer-unavailable` (never a 500), nothing is
// created twice, and new keys work with the new server key.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DemoFixture } from '../../src/demo/demoData.js';
import { openDatabase } from '../../src/store/database.js';
import { ContractClient } from '../support/contractClient.js';
import { makeDemoDatabaseFile, startServerProcess, stopServerProcesses, type ServerProcess, type DemoDatabaseFile } from '../support/serverProcess.js';
import { bearer } from '../support/testApp.js';

let database: DemoDatabaseFile;
let databasePath: string;
let fixture: DemoFixture;
const started: ServerProcess[] = [];

const newServerKey = () => randomBytes(32).toString('base64url');

beforeAll(async () => {
  database = await makeDemoDatabaseFile('contract-api-rotated-key-');
  ({ databasePath, fixture } = database);
});

afterAll(async () => {
  await stopServerProcesses(started.map((server) => server.child));
  database?.remove();
});

async function start(webhookSecretKey: string): Promise<{ server: ServerProcess; client: ContractClient }> {
  // The in-process worker would refuse to start on signing secrets it cannot open; the API alone starts.
  const server = await startServerProcess({ DATABASE_PATH: databasePath, DEMO_DATA: 'off', WEBHOOK_WORKER: 'off', WEBHOOK_SECRET_KEY: webhookSecretKey });
  started.push(server);
  return { server, client: new ContractClient(server.url, 'work-platform', 'Problem') };
}

function createTask(client: ContractClient, idempotencyKey: string, title: string) {
  return client.request('POST', '/v1/tasks', {
    headers: { ...bearer(fixture.workPlatform.tokens.all), 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
    body: JSON.stringify({ projectId: fixture.workPlatform.projectId, title }),
  });
}

describe('idempotent replay after the server key was replaced', () => {
  it('answers the declared 409 idempotent-answer-unavailable, creates nothing twice, and takes new keys', async () => {
    const first = await start(newServerKey());
    const created = await createTask(first.client, 'rotated-key-1', 'Sealed with the first key');
    expect(created.status).toBe(201);
    const replayed = await createTask(first.client, 'rotated-key-1', 'Sealed with the first key');
    expect(replayed.status).toBe(201);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.body).toEqual(created.body);
    expect(await stopServerProcesses([first.server.child])).toEqual([0]);

    const second = await start(newServerKey());
    const repeat = await createTask(second.client, 'rotated-key-1', 'Sealed with the first key');
    expect(repeat.status).toBe(409);
    expect(repeat.headers['content-type']).toBe('application/problem+json');
    expect(repeat.body).toMatchObject({
      type: 'https://errors.work-platform.example/problems/conflict',
      status: 409,
      code: 'idempotent-answer-unavailable',
    });
    // The documented way on: the resource exists, once.
    const taskId = (created.body as { id: string }).id;
    expect((await second.client.get(`/v1/tasks/${taskId}`, bearer(fixture.workPlatform.tokens.all))).status).toBe(200);
    const db = openDatabase(databasePath);
    try {
      expect(db.prepare('SELECT count(*) FROM tasks WHERE title = ?').pluck().get('Sealed with the first key')).toBe(1);
    } finally {
      db.close();
    }

    const fresh = await createTask(second.client, 'rotated-key-2', 'Sealed with the second key');
    expect(fresh.status).toBe(201);
    expect((await createTask(second.client, 'rotated-key-2', 'Sealed with the second key')).headers['idempotent-replayed']).toBe('true');
    expect(second.server.output()).not.toMatch(/"status":500|unhandled error/);
  }, 60_000);
});
