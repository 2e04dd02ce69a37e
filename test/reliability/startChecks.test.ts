// A start that cannot succeed changes nothing, and what a start prints is true: the address bound,
// the demo data's keys (or how to get them), the settings in columns. Real server processes.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ENVIRONMENT_VARIABLES } from '../../src/config.js';
import { demoTenants } from '../../src/demo/demoData.js';
import { demoOauthClient, demoWebhook, demoWorkspaces } from '../../src/demo/workPlatformDemo.js';
import { demoRecordQueries } from '../../src/startChecks.js';
import { copyProject, type ProjectCopy } from '../support/projectCopy.js';
import { makeDemoDatabaseFile, runServerProcess, startServerProcess, stopServerProcesses, type DemoDatabaseFile, type ServerProcess } from '../support/serverProcess.js';

const servers: ServerProcess[] = [];
const cleanups: (() => void)[] = [];
afterAll(async () => {
  await stopServerProcesses(servers.map((server) => server.child));
  for (const cleanup of cleanups) cleanup();
});

describe('a start with a handler file missing', () => {
  let copy: ProjectCopy;
  it('fails with a message naming the file to add, and the database is not created', async () => {
    copy = copyProject('contract-api-missing-handler-');
    cleanups.push(() => copy.remove());
    rmSync(copy.file('src/workPlatform/operations/getTask.ts'));
    const dataDir = mkdtempSync(path.join(tmpdir(), 'contract-api-missing-handler-data-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const databasePath = path.join(dataDir, 'data', 'app.db');

    const started = await runServerProcess({ DATABASE_PATH: databasePath }, { cwd: copy.root });
    expect(started.code, started.output).toBe(1);
    expect(started.output).toContain(`Start-up failed: No handler for operation getTask: add ${copy.file('src/workPlatform/operations/getTask.ts')} exporting const getTask`);
    expect(started.output).toContain('Nothing was changed');
    expect(started.output).not.toMatch(/listening on|Demo data loaded/);
    // Neither created nor migrated, so the next start (with the file back) loads the demo data and shows its key.
    expect(existsSync(databasePath)).toBe(false);
    expect(existsSync(path.dirname(databasePath))).toBe(false);
  }, 90_000);
});

describe('the demo records a start looks for', () => {
  it('are the demo data set’s fixed ids', () => {
    expect(Object.fromEntries(demoRecordQueries.map(({ table, ids }) => [table, [...ids]]))).toEqual({
      tenants: Object.values(demoTenants).map((tenant) => tenant.id),
      workspaces: Object.values(demoWorkspaces).map((workspace) => workspace.id),
      oauth_clients: [demoOauthClient.id],
      webhook_subscriptions: [demoWebhook.id],
    });
  });
});

describe('the banner', () => {
  let database: DemoDatabaseFile;
  it('on a database that already holds the demo data set, says how to get its keys', async () => {
    database = await makeDemoDatabaseFile('contract-api-banner-demo-');
    cleanups.push(() => database.remove());
    // DEMO_DATA is on by default outside production; the database is not empty, so nothing is loaded.
    const server = await startServerProcess({ DATABASE_PATH: database.databasePath, WEBHOOK_WORKER: 'off' });
    servers.push(server);
    expect(server.output()).not.toContain('Demo data loaded');
    expect(server.output()).toContain('This database holds the demo data set; its keys and tokens were shown only when it was loaded.');
    expect(server.output()).toContain('npm run --silent admin -- demo --json');
    expect(server.output()).not.toContain('WARNING');
  });

  it('prints the address it binds: every interface for HOST=0.0.0.0, and the public base URL apart', async () => {
    const server = await startServerProcess({ DATABASE_PATH: database.databasePath, WEBHOOK_WORKER: 'off', HOST: '0.0.0.0' });
    servers.push(server);
    const port = new URL(server.url).port;
    expect(server.output()).toContain(`listening on http://0.0.0.0:${port} (every IPv4 interface; from this machine: http://127.0.0.1:${port})`);
    expect(server.output()).toContain(`  public base URL: http://localhost:${port}\n`);
    expect((await fetch(`http://127.0.0.1:${port}/api/v1/openapi.json`)).status).toBe(200);
  });

  it('prints the one address bound for a named HOST', async () => {
    const server = await startServerProcess({ DATABASE_PATH: database.databasePath, WEBHOOK_WORKER: 'off', HOST: '127.0.0.1', PUBLIC_BASE_URL: 'https://api.example.com' });
    servers.push(server);
    expect(server.output()).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+\n/);
    expect(server.output()).toContain('  public base URL: https://api.example.com\n');
  });
});

describe('npm start -- --help', () => {
  it('keeps names and descriptions in two columns, the longest name included', async () => {
    const help = await runServerProcess({}, { args: ['--help'] });
    expect(help.code).toBe(0);
    const lines = help.stdout.split('\n').filter((line) => ENVIRONMENT_VARIABLES.some((variable) => line.startsWith(`  ${variable.name} `)));
    expect(lines).toHaveLength(ENVIRONMENT_VARIABLES.length);
    const longest = Math.max(...ENVIRONMENT_VARIABLES.map((variable) => variable.name.length));
    for (const line of lines) {
      // Two spaces at least after the name, and every description starts in the same column.
      expect(line, line).toMatch(new RegExp(`^  [A-Z0-9_]+ {2,}\\S`));
      expect(line.slice(2 + longest, 4 + longest), line).toBe('  ');
      expect(line[4 + longest], line).not.toBe(' ');
    }
    expect(help.stdout).toMatch(/ {2}AI_PRICE_OUTPUT_CENTS_PER_MILLION_TOKENS {2}US cents per million completion tokens/);
  });
});
