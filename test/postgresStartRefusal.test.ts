import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServerProcess, startWorkerProcess } from './support/serverProcess.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'contract-api-postgres-refusal-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

// The stores run on SQLite only so far: with DATABASE_URL set, the entry points that serve must say
// so and stop, rather than listen on a SQLite file the operator did not ask for.
describe.each([
  ['npm start', startServerProcess],
  ['npm run worker', startWorkerProcess],
])('%s with DATABASE_URL set', (_name, start) => {
  it('exits 1 before listening, in one line naming admin migrate, without the password', async () => {
    const databasePath = path.join(dataDir, `${_name.replace(/\W+/g, '-')}.db`);
    const env = { DATABASE_URL: 'postgres://app:hunter2@127.0.0.1:9/app', DATABASE_PATH: databasePath };
    const failure = await start(env).then(
      () => undefined,
      (error: Error) => error.message,
    );
    expect(failure).toMatch(/exited with 1: /);
    const output = failure!.replace(/^.*exited with 1: /, '');
    // oidc-provider warns about Node 20 as the server's modules load; that line is not ours.
    const lines = output.trim().split('\n').filter((line) => !line.startsWith('oidc-provider WARNING'));
    expect(lines).toEqual([
      'Configuration error: DATABASE_URL selects PostgreSQL (postgres://app:***@127.0.0.1:9/app), which this build cannot serve from yet; ' +
        '`npm run admin -- migrate` can already create and migrate its schema. Unset DATABASE_URL to serve from SQLite at DATABASE_PATH.',
    ]);
    expect(output).not.toContain('hunter2');
    expect(existsSync(databasePath)).toBe(false);
  });
});
