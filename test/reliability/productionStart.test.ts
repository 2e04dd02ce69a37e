// A production start on an empty database: no live demo credentials unless asked, and files only
// their owner can read; demo data in production (asked for, or already in the database) refused
// unless the operator confirms it. Real server processes.
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';
import { makeDemoDatabaseFile, runWorkerProcess, startServerProcess, startWorkerProcess, stopServerProcesses, type DemoDatabaseFile, type ServerProcess } from '../support/serverProcess.js';

const dirs: string[] = [];
const servers: ServerProcess[] = [];
const demoFiles: DemoDatabaseFile[] = [];
afterAll(async () => {
  await stopServerProcesses(servers.map((server) => server.child));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  for (const file of demoFiles) file.remove();
});

/** What a start that was refused printed (it exits 1 before listening). */
async function refusedStart(env: Record<string, string>): Promise<string> {
  const failure = await startServerProcess(env).then(
    (server) => {
      servers.push(server);
      return undefined;
    },
    (error: Error) => error.message,
  );
  expect(failure).toMatch(/^server exited with 1: /);
  return failure!;
}

/** Starts `npm start` on a new empty data folder; resolves with what it printed once listening. */
async function startOnEmpty(env: Record<string, string>) {
  const root = mkdtempSync(path.join(tmpdir(), 'contract-api-production-'));
  dirs.push(root);
  const databasePath = path.join(root, 'data', 'app.db');
  const server = await startServerProcess({ DATABASE_PATH: databasePath, ...env });
  servers.push(server);
  const db = openDatabase(databasePath);
  const tenants = db.prepare('SELECT count(*) FROM tenants').pluck().get() as number;
  const tokens = db.prepare('SELECT count(*) FROM personal_access_tokens').pluck().get() as number;
  db.close();
  return { databasePath, tenants, tokens, server };
}

const modeOf = (file: string) => statSync(file).mode & 0o777;

describe('NODE_ENV=production on an empty database', () => {
  it('loads no demo data and prints no key or token, and creates the database readable by its owner only', async () => {
    const started = await startOnEmpty({ NODE_ENV: 'production' });
    expect(started.tenants).toBe(0);
    expect(started.tokens).toBe(0);
    expect(started.server.output()).toContain('listening on');
    expect(started.server.output()).not.toMatch(/pfk_|svc_pat_|Demo data loaded/);
    expect(modeOf(started.databasePath)).toBe(0o600);
    expect(modeOf(`${started.databasePath}-wal`)).toBe(0o600);
    expect(modeOf(path.dirname(started.databasePath))).toBe(0o700);
    expect((await fetch(`${started.server.url}/api/v1/openapi.json`)).status).toBe(200);
  });

  it('refuses DEMO_DATA=on without ALLOW_DEMO_DATA_IN_PRODUCTION, saying why, before creating the database', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'contract-api-production-'));
    dirs.push(root);
    const databasePath = path.join(root, 'data', 'app.db');
    const output = await refusedStart({ NODE_ENV: 'production', DEMO_DATA: 'on', DATABASE_PATH: databasePath });
    expect(output).toContain('Configuration error: NODE_ENV=production with DEMO_DATA=on');
    expect(output).toContain('ocl_demoNorthwindCli');
    expect(output).toContain('ALLOW_DEMO_DATA_IN_PRODUCTION=on');
    expect(existsSync(databasePath)).toBe(false);
  });

  it('loads the demo data when DEMO_DATA=on asks for it and ALLOW_DEMO_DATA_IN_PRODUCTION=on confirms it, with a warning', async () => {
    const started = await startOnEmpty({ NODE_ENV: 'production', DEMO_DATA: 'on', ALLOW_DEMO_DATA_IN_PRODUCTION: 'on' });
    expect(started.tenants).toBeGreaterThan(0);
    expect(started.tokens).toBeGreaterThan(0);
    expect(started.server.output()).toMatch(/Demo data loaded[\s\S]*pfk_/);
    expect(started.server.output()).toMatch(/WARNING: NODE_ENV=production serves the demo data set/);
  });
});

describe('NODE_ENV=production on a database that holds the demo data set', () => {
  it('refuses to start unless ALLOW_DEMO_DATA_IN_PRODUCTION=on, and then warns and says how to get demo keys', async () => {
    const database = await makeDemoDatabaseFile('contract-api-production-demo-');
    demoFiles.push(database);
    const output = await refusedStart({ NODE_ENV: 'production', DATABASE_PATH: database.databasePath });
    expect(output).toContain('Configuration error: NODE_ENV=production on a database that holds demo records');
    expect(output).toContain('whk_Q7mXc2VbN9pLr4TzK8sD');

    const server = await startServerProcess({ NODE_ENV: 'production', DATABASE_PATH: database.databasePath, ALLOW_DEMO_DATA_IN_PRODUCTION: 'on' });
    servers.push(server);
    expect(server.output()).toMatch(/WARNING: NODE_ENV=production serves the demo data set/);
    expect(server.output()).toContain('npm run --silent admin -- demo --json');
    expect(server.output()).not.toMatch(/pfk_|svc_pat_/);
  });
});

// npm run worker asks the server's own check (src/startChecks.ts, checkDemoDataInProduction): it
// signs and sends with the demo webhook's secrets, which anyone can read in this repository.
describe('npm run worker with NODE_ENV=production', () => {
  it('refuses a database that holds the demo data set unless ALLOW_DEMO_DATA_IN_PRODUCTION=on, and then warns', async () => {
    const database = await makeDemoDatabaseFile('contract-api-production-worker-');
    demoFiles.push(database);
    const refused = await runWorkerProcess([], { NODE_ENV: 'production', DATABASE_PATH: database.databasePath });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('Configuration error: NODE_ENV=production on a database that holds demo records');
    expect(refused.stderr).toContain('ALLOW_DEMO_DATA_IN_PRODUCTION=on');
    expect(refused.stdout).not.toContain('Webhook delivery worker');

    const worker = await startWorkerProcess({ NODE_ENV: 'production', DATABASE_PATH: database.databasePath, ALLOW_DEMO_DATA_IN_PRODUCTION: 'on' });
    servers.push({ child: worker.child, url: '', output: worker.output });
    expect(worker.output()).toMatch(/WARNING: NODE_ENV=production serves the demo data set/);
  });

  it('refuses DEMO_DATA=on without ALLOW_DEMO_DATA_IN_PRODUCTION, before creating the database', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'contract-api-production-worker-'));
    dirs.push(root);
    const databasePath = path.join(root, 'data', 'app.db');
    const refused = await runWorkerProcess([], { NODE_ENV: 'production', DEMO_DATA: 'on', DATABASE_PATH: databasePath });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('Configuration error: NODE_ENV=production with DEMO_DATA=on');
    expect(existsSync(databasePath)).toBe(false);
  });

  it('starts on a production database without demo records, with no warning', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'contract-api-production-worker-'));
    dirs.push(root);
    const worker = await startWorkerProcess({ NODE_ENV: 'production', DATABASE_PATH: path.join(root, 'data', 'app.db') });
    servers.push({ child: worker.child, url: '', output: worker.output });
    expect(worker.output()).not.toContain('WARNING');
  });
});
