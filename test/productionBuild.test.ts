import { spawnSync } from 'node:child_process';
import { readFileSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIntoScratchFolder, type ScratchBuild } from '../scripts/compiledBuild.js';
import { compiledScriptNodeArguments, npmScriptNodeArguments } from '../scripts/npmScriptArguments.js';
import { ContractClient } from './support/contractClient.js';
import { makeDemoDatabaseFile, startServerProcess, startWorkerProcess, stopServerProcesses, type DemoDatabaseFile } from './support/serverProcess.js';

const repoRoot = path.resolve(import.meta.dirname, '..');

// npm run build as tsc -p tsconfig.build.json, into a folder of this file's own (not dist/, which may be stale or in use).
let build: ScratchBuild;
let database: DemoDatabaseFile;

// tsc over every source takes ~15 s alone; beside two other test files on two cores, far longer.
beforeAll(async () => {
  build = await buildIntoScratchFolder('test-');
  database = await makeDemoDatabaseFile('contract-api-compiled-');
}, 240_000);
afterAll(() => {
  build?.remove();
  database?.remove();
});

/** A compiled script run to its end from the repository root, as npm runs it. */
function runCompiled(script: 'start:production' | 'admin:production', outDir: string, args: string[] = []) {
  const result = spawnSync(process.execPath, [...compiledScriptNodeArguments(script, outDir), ...args], {
    cwd: repoRoot,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '', DATABASE_PATH: database.databasePath },
    timeout: 30_000,
  });
  if (result.error) throw result.error;
  return result;
}

describe('npm run start:production (the compiled build)', () => {
  it('runs with plain node, no TypeScript loader, and answers from an existing database', async () => {
    const nodeArguments = compiledScriptNodeArguments('start:production', build.outDir);
    expect(nodeArguments.join(' ')).not.toMatch(/tsx|\.ts\b/);
    const server = await startServerProcess({ DATABASE_PATH: database.databasePath, NODE_ENV: 'production', ALLOW_DEMO_DATA_IN_PRODUCTION: 'on', WEBHOOK_WORKER: 'off' }, nodeArguments);
    try {
      const { fixture } = database;
      const portfolio = new ContractClient(server.url);
      expect((await portfolio.get('/api/v1/portfolio', { authorization: `Bearer ${fixture.portfolio.apiKey}` })).status).toBe(200);
      const workPlatform = new ContractClient(server.url, 'work-platform', 'Problem');
      const tasks = await workPlatform.get('/v1/tasks?limit=5', { authorization: `Bearer ${fixture.workPlatform.tokens.all}` });
      expect(tasks.status).toBe(200);
      expect((tasks.body as { items: unknown[] }).items.length).toBeGreaterThan(0);
      // Read by path from the project root, or loaded on first use: each must be found from dist/ too.
      const yaml = await workPlatform.get('/v1/openapi.yaml');
      expect(yaml.status).toBe(200);
      expect(yaml.text).toContain(`url: ${server.url.replace('127.0.0.1', 'localhost')}`);
      expect((await portfolio.get('/api/v1/docs')).status).toBe(200);
      const renderer = await fetch(`${server.url}/assets/redoc.standalone.js`);
      expect(renderer.status).toBe(200);
      expect((await renderer.text()).length).toBeGreaterThan(100_000);
      const metadata = await fetch(`${server.url}/.well-known/oauth-authorization-server`);
      expect(metadata.status).toBe(200);
      expect(((await metadata.json()) as { code_challenge_methods_supported: string[] }).code_challenge_methods_supported).toEqual(['S256']);
    } finally {
      expect(await stopServerProcesses([server.child])).toEqual([0]);
    }
    expect(server.output()).toContain('Stopped.');
  });

  it('has a compiled worker and admin CLI', async () => {
    const worker = await startWorkerProcess({ DATABASE_PATH: database.databasePath }, compiledScriptNodeArguments('worker:production', build.outDir));
    expect(await stopServerProcesses([worker.child])).toEqual([0]);
    const tenants = runCompiled('admin:production', build.outDir, ['tenant', 'list', '--json']);
    expect(tenants.status).toBe(0);
    expect((JSON.parse(tenants.stdout) as { tenants: { id: string }[] }).tenants.map((tenant) => tenant.id)).toContain(database.fixture.portfolio.tenantId);
  });

  it('refuses a missing build, and one older than the sources, with what to do', () => {
    const missing = runCompiled('start:production', path.join(build.outDir, 'not-built'));
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/^No compiled build at .*not-built\/src\/server\.js: run npm run build first\.\n$/);

    const entry = path.join(build.outDir, 'src/server.js');
    const longAgo = new Date('2001-01-01T00:00:00Z');
    utimesSync(entry, longAgo, longAgo);
    const stale = runCompiled('start:production', build.outDir);
    expect(stale.status).toBe(1);
    expect(stale.stderr).toMatch(/is older than the sources \(\S+ changed after it was built\): run npm run build first\.\n$/);
  });
});

describe('the Dockerfile', () => {
  const dockerfile = readFileSync(path.join(repoRoot, 'Dockerfile'), 'utf8');

  it('starts the compiled server exactly as npm run start:production does', () => {
    const command = /^CMD (\[.*\])$/m.exec(dockerfile)?.[1];
    expect(command).toBeDefined();
    expect(JSON.parse(command!)).toEqual(['node', ...npmScriptNodeArguments('start:production')]);
  });
});
