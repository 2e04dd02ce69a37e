// npm start and npm run worker on PostgreSQL (DATABASE_URL): they refuse to start without the
// secrets every host must share, and with them they serve from PostgreSQL, with the admin CLI
// creating what a client needs on the same database.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sharedSecretNames } from '../src/config.js';
import { secretsCommand } from '../src/cli/secretsCommand.js';
import { sharedPostgresServer } from './support/postgresServer.js';
import { runAdminInProcess, startServerProcess, startWorkerProcess, stopServerProcesses } from './support/serverProcess.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'contract-api-postgres-start-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function newSecrets(): Promise<Record<string, string>> {
  const { json } = await secretsCommand.run({ db: () => Promise.reject(new Error('unused')), databasePath: '', env: {}, now: Date.now, values: {}, positionals: [] });
  return json as Record<string, string>;
}

/** Lines a process printed, without oidc-provider's warning about Node 20 (not ours). */
const ownLines = (output: string) =>
  output
    .trim()
    .split('\n')
    .filter((line) => !line.startsWith('oidc-provider WARNING'));

describe.each([
  ['npm start', startServerProcess],
  ['npm run worker', startWorkerProcess],
])('%s with DATABASE_URL set', (name, start) => {
  it('refuses to start without the shared secrets, naming them and the command that makes them, never the password', async () => {
    const databasePath = path.join(dataDir, `${name.replace(/\W+/g, '-')}.db`);
    const env = { DATABASE_URL: 'postgres://app:hunter2@127.0.0.1:9/app', DATABASE_PATH: databasePath, ...Object.fromEntries(sharedSecretNames.map((n) => [n, ''])) };
    const failure = await start(env).then(
      () => undefined,
      (error: Error) => error.message,
    );
    expect(failure).toMatch(/exited with 1: /);
    const output = failure!.replace(/^.*exited with 1: /, '');
    expect(ownLines(output)).toEqual([
      `Configuration error: DATABASE_URL is set, so the processes of this deployment may run on several hosts and must share their secrets, but ${sharedSecretNames.join(', ')} are not set. ` +
        'Generate them once with `npm run --silent admin -- secrets > .env` and give that file to every server and worker.',
    ]);
    expect(existsSync(databasePath)).toBe(false);
  });

  it('with the secrets but no PostgreSQL answering, fails its start in one line without the password', async () => {
    const env = { DATABASE_URL: 'postgres://app:hunter2@127.0.0.1:9/app', DATABASE_CONNECT_TIMEOUT_MS: '2000', ...(await newSecrets()) };
    const failure = await start(env).then(
      () => undefined,
      (error: Error) => error.message,
    );
    expect(failure).toMatch(/exited with 1: /);
    expect(failure).toMatch(/Start-up failed: .*(ECONNREFUSED|connect)/);
    expect(failure).not.toContain('hunter2');
  });
});

describe('npm start on PostgreSQL', () => {
  it('serves the Work-Platform API from the database the admin CLI set up, and a worker starts beside it', async () => {
    const url = await (await sharedPostgresServer()).createDatabase();
    const env = { DATABASE_URL: url, ...(await newSecrets()) };
    // The CLI's commands in this process (runAdminInProcess): the CLI as a process is test/cli/migrate.test.ts's.
    const admin = async (...args: string[]) => {
      const result = await runAdminInProcess([...args, '--json'], { env });
      expect(result.stderr).toBe('');
      return JSON.parse(result.stdout) as Record<string, string>;
    };
    expect(await admin('migrate')).toMatchObject({ engine: 'postgresql', upToDate: false });
    const workspace = await admin('workspace', 'create', '--name', 'On PostgreSQL', '--plan', 'pro');
    const user = await admin('user', 'create', '--workspace', workspace.id!, '--role', 'owner');
    const { token } = await admin('pat', 'create', '--workspace', workspace.id!, '--user', user.id!, '--scopes', 'projects:write,tasks:read,tasks:write');

    const server = await startServerProcess({ ...env, WEBHOOK_WORKER: 'off' });
    const worker = await startWorkerProcess(env);
    try {
      expect(server.output()).toMatch(/database: +PostgreSQL at postgres:\/\/app@127\.0\.0\.1:\d+\/t_/);
      const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
        fetch(`${server.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      const project = await call('POST', '/v1/projects', { name: 'Scale out' });
      expect(project.status).toBe(201);
      const projectId = ((await project.json()) as { id: string }).id;
      const created = await call('POST', '/v1/tasks', { projectId, title: 'Served by PostgreSQL' }, { 'idempotency-key': 'first-task' });
      expect(created.status).toBe(201);
      const task = (await created.json()) as { id: string; version: number };
      const replay = await call('POST', '/v1/tasks', { projectId, title: 'Served by PostgreSQL' }, { 'idempotency-key': 'first-task' });
      expect(((await replay.json()) as { id: string }).id).toBe(task.id);
      const stale = await call('PATCH', `/v1/tasks/${task.id}`, { title: 'Stale' }, { 'if-match': '"7"' });
      expect(stale.status).toBe(409);
      const list = await call('GET', '/v1/tasks?limit=10');
      expect(((await list.json()) as { items: { id: string }[] }).items.map((item) => item.id)).toEqual([task.id]);
      expect(worker.output()).toMatch(/database: +PostgreSQL at postgres:\/\/app@127\.0\.0\.1:\d+\/t_/);
    } finally {
      expect(await stopServerProcesses([server.child, worker.child])).toEqual([0, 0]);
    }
  }, 60_000);
});
