// SIGTERM with requests in flight on kept-alive connections, against the real server as a child
// process: every request the server had begun is answered (and says Connection: close), the
// process exits 0, and every write it answered 201 is there after a restart.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DemoFixture } from '../../src/demo/demoData.js';
import { ContractClient } from '../support/contractClient.js';
import { makeDemoDatabaseFile, startServerProcess, stopServerProcesses, type ServerProcess, type DemoDatabaseFile } from '../support/serverProcess.js';
import { bearer } from '../support/testApp.js';

let database: DemoDatabaseFile;
let databasePath: string;
let fixture: DemoFixture;
const started: ServerProcess[] = [];

beforeAll(async () => {
  database = await makeDemoDatabaseFile('contract-api-shutdown-');
  ({ databasePath, fixture } = database);
});

afterAll(async () => {
  await stopServerProcesses(started.map((server) => server.child));
  database?.remove();
});

async function start(): Promise<ServerProcess> {
  const server = await startServerProcess({ DATABASE_PATH: databasePath, DEMO_DATA: 'off', WEBHOOK_WORKER: 'off' });
  started.push(server);
  return server;
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * A POST whose headers ask `Expect: 100-continue`: the server's 100 answer proves it has begun
 * the request; `finish()` sends the body.
 */
function beginCreateTask(url: string, agent: http.Agent, title: string) {
  const body = JSON.stringify({ projectId: fixture.workPlatform.projectId, title });
  const request = http.request(new URL('/v1/tasks', url), {
    method: 'POST',
    agent,
    headers: {
      ...bearer(fixture.workPlatform.tokens.all),
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      expect: '100-continue',
    },
  });
  const beginning = new Promise<void>((resolve) => request.once('continue', () => resolve()));
  const answer = new Promise<Answer>((resolve, reject) => {
    request.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }));
    });
    request.on('error', reject);
  });
  request.flushHeaders();
  return { beginning, answer, finish: () => request.end(body) };
}

function exited(server: ServerProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (server.child.exitCode !== null) resolve(server.child.exitCode);
    else server.child.once('exit', (code) => resolve(code));
  });
}

describe('SIGTERM', () => {
  it('answers the requests it had begun with Connection: close, exits 0 within 10 s, and keeps every 201 across a restart', async () => {
    const server = await start();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 6 });
    const pending = Array.from({ length: 6 }, (_, index) => beginCreateTask(server.url, agent, `Begun before SIGTERM ${index}`));
    await Promise.all(pending.map((request) => request.beginning));

    const exit = exited(server);
    server.child.kill('SIGTERM');
    // The server learns of the signal before the bodies arrive: they are sent once it is shutting down.
    await new Promise<void>((resolve) => server.child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('SIGTERM received') && resolve()));
    for (const request of pending) request.finish();

    const answers = await Promise.all(pending.map((request) => request.answer));
    for (const answer of answers) {
      expect(answer.status, answer.body).toBe(201);
      expect(answer.headers.connection).toBe('close');
    }
    const code = await Promise.race([exit, new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 10_000).unref())]);
    expect(code).toBe(0);
    agent.destroy();

    const restarted = await start();
    const client = new ContractClient(restarted.url, 'work-platform', 'Problem');
    for (const answer of answers) {
      const id = (JSON.parse(answer.body) as { id: string }).id;
      expect((await client.get(`/v1/tasks/${id}`, bearer(fixture.workPlatform.tokens.all))).status).toBe(200);
    }
  }, 40_000);
});
