// SIGTERM with SHUTDOWN_DELAY_MS, against the real server as a child process: /readyz turns 503 at
// once while every request is still served normally; further SIGTERMs and a SIGINT change nothing;
// then the server drains and exits 0.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDemoDatabaseFile, startServerProcess, stopServerProcesses, type DemoDatabaseFile, type ServerProcess } from '../support/serverProcess.js';
import { bearer } from '../support/testApp.js';

let database: DemoDatabaseFile;
const started: ServerProcess[] = [];

beforeAll(async () => {
  database = await makeDemoDatabaseFile('contract-api-shutdown-delay-');
});

afterAll(async () => {
  await stopServerProcesses(started.map((server) => server.child));
  database?.remove();
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** On a connection of its own, as a load balancer's probe or a new client would come. */
function get(url: string, headers: Record<string, string> = {}, agent: http.Agent | false = false): Promise<Answer> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent, headers }, (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
      })
      .on('error', reject);
  });
}

function printed(server: ServerProcess, text: string): Promise<void> {
  return new Promise((resolve) => {
    if (server.output().includes(text)) return resolve();
    const check = () => {
      if (!server.output().includes(text)) return;
      server.child.stdout!.off('data', check);
      resolve();
    };
    server.child.stdout!.on('data', check);
  });
}

function exited(server: ServerProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    if (server.child.exitCode !== null || server.child.signalCode !== null) resolve({ code: server.child.exitCode, signal: server.child.signalCode });
    else server.child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

describe('SIGTERM with SHUTDOWN_DELAY_MS', () => {
  it('answers /readyz 503 at once, keeps serving through the delay whatever signals follow, then drains and exits 0', async () => {
    const server = await startServerProcess({ DATABASE_PATH: database.databasePath, DEMO_DATA: 'off', WEBHOOK_WORKER: 'off', SHUTDOWN_DELAY_MS: '6000' });
    started.push(server);
    const token = database.fixture.workPlatform.tokens.all;
    expect((await get(`${server.url}/readyz`)).status).toBe(200);
    // Its first call compiles the operation's validators: done before the delay starts.
    expect((await get(`${server.url}/v1/tasks?limit=1`, bearer(token))).status).toBe(200);

    const exit = exited(server);
    server.child.kill('SIGTERM');
    await printed(server, 'SIGTERM received');

    const readiness = await get(`${server.url}/readyz`);
    expect(readiness.status).toBe(503);
    expect(readiness.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(readiness.body)).toMatchObject({ status: 503, checks: { database: 'ok', migrations: 'ok', shutdown: 'fail' } });

    // A supervisor's repeated SIGTERM and a terminal's SIGINT: still the one shutdown, still serving.
    server.child.kill('SIGTERM');
    server.child.kill('SIGINT');
    // Served normally: a kept-alive connection is not told to close (as it is once the drain begins).
    const keepAlive = new http.Agent({ keepAlive: true });
    const served = await get(`${server.url}/v1/tasks?limit=1`, bearer(token), keepAlive);
    keepAlive.destroy();
    expect(served.status).toBe(200);
    expect(served.headers.connection).toBe('keep-alive');
    expect((await get(`${server.url}/livez`)).status).toBe(200);
    expect((await get(`${server.url}/readyz`)).status).toBe(503);
    // All of it within the delay: the drain had not begun.
    expect(server.output()).not.toContain('Draining');

    expect(await exit).toEqual({ code: 0, signal: null });
    const output = server.output();
    expect(output.match(/received/g)).toHaveLength(1);
    expect(output).toMatch(/SIGTERM received[\s\S]*Draining[\s\S]*Stopped\./);
  }, 60_000);
});
