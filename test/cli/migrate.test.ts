import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { is } from 'drizzle-orm';
import { PgTable } from 'drizzle-orm/pg-core';
import { afterAll, describe, expect, it } from 'vitest';
import * as postgresSchema from '../../db/postgres/schema.js';
import { generateSecret } from '../../src/auth/serverSecrets.js';
import { makeTempDir } from '../store/factories.js';
import { sharedPostgresServer, withClient } from '../support/postgresServer.js';
import { runAdminCli, runAdminInProcess, type FinishedProcess } from '../support/serverProcess.js';

const dir = makeTempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const journalTags = (folder: string) =>
  (JSON.parse(readFileSync(path.join(folder, 'meta', '_journal.json'), 'utf8')) as { entries: { tag: string }[] }).entries.map((entry) => entry.tag);
const sqliteMigrations = journalTags('db/migrations');
const postgresMigrations = journalTags('db/postgres/migrations');
const postgresTableCount = (Object.values(postgresSchema) as unknown[]).filter((value) => is(value, PgTable)).length;

/** `admin -- migrate`, its entry called in this process (the last test runs the CLI as a child process too). */
function migrate(env: Record<string, string | undefined>, args: string[] = []): Promise<FinishedProcess> {
  return runAdminInProcess(['migrate', ...args], { env: { DATABASE_URL: undefined, ...env } });
}

/** A URL of the database at `url` carrying a password the server ignores (trust authentication), to prove it is never printed. */
function withPassword(url: string): string {
  const parsed = new URL(url);
  parsed.password = 'hunter2';
  return parsed.toString();
}

describe('admin migrate', () => {
  it('is documented in --help, for both engines', async () => {
    const help = await migrate({}, ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('admin -- migrate');
    expect(help.stdout).toContain('DATABASE_URL');
    expect(help.stdout).toContain('DATABASE_PATH');
    const main = await runAdminCli(['--help']);
    expect(main.stdout).toContain('migrate\n      Create or bring up to date the database schema');
  });

  it('creates a missing SQLite file with every migration, then finds it up to date', async () => {
    const databasePath = path.join(dir, 'fresh', 'app.db');
    const first = await migrate({ DATABASE_PATH: databasePath });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toBe([`Applied ${sqliteMigrations.length} migrations to SQLite at ${databasePath}:`, ...sqliteMigrations.map((tag) => `  ${tag}`), ''].join('\n'));
    expect(existsSync(databasePath)).toBe(true);
    const again = await migrate({ DATABASE_PATH: databasePath }, ['--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ engine: 'sqlite', database: databasePath, applied: [], upToDate: true });
    expect((await migrate({ DATABASE_PATH: databasePath })).stdout).toBe(`SQLite at ${databasePath} is up to date; no migrations to apply.\n`);
  });

  it('migrates an empty PostgreSQL database, then finds it up to date, never printing the password', async () => {
    const url = withPassword(await (await sharedPostgresServer()).createDatabase());
    const displayed = url.replace('hunter2', '***');
    const first = await migrate({ DATABASE_URL: url }, ['--json']);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({ engine: 'postgresql', database: displayed, applied: postgresMigrations, upToDate: false });
    const tables = await withClient(url, (client) => client.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'"));
    expect(tables.rows[0]!.n).toBe(postgresTableCount);

    const again = await migrate({ DATABASE_URL: url });
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(`PostgreSQL at ${displayed} is up to date; no migrations to apply.\n`);
    for (const run of [first, again]) expect(run.stdout + run.stderr).not.toContain('hunter2');
  });

  it('fails with exit 1 and a clear message, without the password, when PostgreSQL is unreachable or DATABASE_URL is not one', async () => {
    const unreachable = await migrate({ DATABASE_URL: 'postgres://app:hunter2@127.0.0.1:9/app', DATABASE_CONNECT_TIMEOUT_MS: '2000' });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/^Error: Cannot migrate PostgreSQL at postgres:\/\/app:\*\*\*@127\.0\.0\.1:9\/app: .*ECONNREFUSED/);
    const wrongScheme = await migrate({ DATABASE_URL: 'mysql://app:hunter2@db.example/app' });
    expect(wrongScheme.code).toBe(1);
    expect(wrongScheme.stderr).toContain('Error: DATABASE_URL must be a postgres:// or postgresql:// URL');
    for (const run of [unreachable, wrongScheme]) expect(run.stdout + run.stderr).not.toContain('hunter2');
  });

  it('runs the other commands on the PostgreSQL of DATABASE_URL, never on SQLite, and loads the demo data set there only with the shared secrets', async () => {
    const databasePath = path.join(dir, 'untouched', 'app.db');
    const env = { DATABASE_URL: 'postgres://app:hunter2@127.0.0.1:9/app', DATABASE_PATH: databasePath, DATABASE_CONNECT_TIMEOUT_MS: '2000' };
    const run = await runAdminCli(['tenant', 'list'], { env });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^Error: .*ECONNREFUSED/);
    expect(run.stderr).not.toContain('hunter2');
    const postgresEnv = { ...env, DATABASE_URL: await (await sharedPostgresServer()).createDatabase({ migrated: true }) };
    const refused = await runAdminInProcess(['demo', '--json'], { env: postgresEnv });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('DATABASE_URL is set: give this command the SESSION_JWT_SECRET and WEBHOOK_SECRET_KEY the servers share');
    const secrets = { SESSION_JWT_SECRET: generateSecret(), WEBHOOK_SECRET_KEY: generateSecret() };
    const demo = await runAdminInProcess(['demo', '--json'], { env: { ...postgresEnv, ...secrets } });
    expect(demo.code, demo.stderr).toBe(0);
    const fixture = JSON.parse(demo.stdout) as { workPlatform: { workspaceId: string; taskIds: string[] } };
    const again = await runAdminInProcess(['demo', '--json'], { env: { ...postgresEnv, ...secrets } });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).workPlatform.taskIds).toEqual(fixture.workPlatform.taskIds);
    const stored = await withClient(postgresEnv.DATABASE_URL, async (client) =>
      Number((await client.query('SELECT count(*) AS n FROM tasks WHERE workspace_id = $1', [fixture.workPlatform.workspaceId])).rows[0].n),
    );
    expect(stored).toBe(fixture.workPlatform.taskIds.length);
    expect(existsSync(databasePath)).toBe(false);
  }, 120_000);
});
