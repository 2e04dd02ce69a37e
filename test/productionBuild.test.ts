import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIntoScratchFolder, type ScratchBuild } from '../scripts/compiledBuild.js';
import { compiledScriptNodeArguments, npmScriptNodeArguments } from '../scripts/npmScriptArguments.js';
import { ContractClient } from './support/contractClient.js';
import { makeDemoDatabaseFile, runServerProcess, startServerProcess, startWorkerProcess, stopServerProcesses, type DemoDatabaseFile } from './support/serverProcess.js';

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

/** The compiled admin CLI run to its end from the repository root, as npm runs it. */
function runCompiledAdmin(outDir: string, args: string[]) {
  const result = spawnSync(process.execPath, [...compiledScriptNodeArguments('admin:production', outDir), ...args], {
    cwd: repoRoot,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '', DATABASE_PATH: database.databasePath },
    timeout: 30_000,
  });
  if (result.error) throw result.error;
  return result;
}

/** The compiled server run to its end (a start it refuses), started as every server process of the tests is. */
const runCompiledServer = (outDir: string) =>
  runServerProcess({ DATABASE_PATH: database.databasePath }, { nodeArguments: compiledScriptNodeArguments('start:production', outDir), timeoutMs: 30_000 });

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
    const tenants = runCompiledAdmin(build.outDir, ['tenant', 'list', '--json']);
    expect(tenants.status).toBe(0);
    expect((JSON.parse(tenants.stdout) as { tenants: { id: string }[] }).tenants.map((tenant) => tenant.id)).toContain(database.fixture.portfolio.tenantId);
  });

  it('refuses a missing build, and one older than the sources, with what to do', async () => {
    const missing = await runCompiledServer(path.join(build.outDir, 'not-built'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^No compiled build at .*not-built\/src\/server\.js: run npm run build first\.\n$/);

    const entry = path.join(build.outDir, 'src/server.js');
    const longAgo = new Date('2001-01-01T00:00:00Z');
    utimesSync(entry, longAgo, longAgo);
    const stale = await runCompiledServer(build.outDir);
    expect(stale.code).toBe(1);
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

/**
 * Hard links of `from`'s files under `to` (copies across file systems), symbolic links kept as they are: a copy of
 * node_modules in about a second that `npm prune` may then thin without touching the original.
 */
function linkTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) linkTree(source, target);
    else if (entry.isSymbolicLink()) symlinkSync(readlinkSync(source), target);
    else {
      try {
        linkSync(source, target);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
        copyFileSync(source, target);
      }
    }
  }
}

describe('the production dependencies (npm prune --omit=dev, as the Dockerfile does)', () => {
  // The Docker image's runtime stage, outside the repository (so that no node_modules above it can stand in for a
  // missing package): package.json, node_modules pruned to the production dependencies, the build and the files it reads.
  let project: string;
  let productionDatabase: DemoDatabaseFile;

  beforeAll(async () => {
    project = mkdtempSync(path.join(tmpdir(), 'contract-api-prod-deps-'));
    productionDatabase = await makeDemoDatabaseFile('contract-api-prod-deps-db-');
    for (const file of ['package.json', 'package-lock.json']) copyFileSync(path.join(repoRoot, file), path.join(project, file));
    linkTree(path.join(repoRoot, 'node_modules'), path.join(project, 'node_modules'));
    execFileSync('npm', ['prune', '--omit=dev', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: project, stdio: 'pipe', timeout: 60_000 });
    linkTree(build.outDir, path.join(project, 'dist'));
    for (const folder of ['generated', 'db/migrations', 'db/postgres/migrations']) linkTree(path.join(repoRoot, folder), path.join(project, folder));
    for (const file of ['specs/portfolio/import-format.schema.json', 'scripts/requireFreshBuild.mjs']) {
      mkdirSync(path.dirname(path.join(project, file)), { recursive: true });
      copyFileSync(path.join(repoRoot, file), path.join(project, file));
    }
  }, 120_000);
  afterAll(() => {
    if (project) rmSync(project, { recursive: true, force: true });
    productionDatabase?.remove();
  });

  it('leaves out what only development, the bench and the tests use', () => {
    const packageJson = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    for (const name of ['tsx', 'express', 'postman-collection', 'typescript', 'vitest']) expect(Object.keys(packageJson.dependencies)).not.toContain(name);
    for (const name of ['tsx', 'esbuild', 'postman-collection', 'typescript', 'vitest', 'drizzle-kit']) expect(existsSync(path.join(project, 'node_modules', name))).toBe(false);
    // express stays installed: @modelcontextprotocol/sdk depends on it, though the modules this server loads from it do not.
    const importers = spawnSync('grep', ['-rlE', `(from|import\\() *['"](express|tsx)['"/]`, path.join(project, 'dist')], { encoding: 'utf8' });
    expect(importers.stdout).toBe('');
    expect(importers.status).toBe(1);
  });

  it('starts the compiled server, which answers every surface, and runs the compiled admin CLI', async () => {
    const { fixture } = productionDatabase;
    const server = await startServerProcess(
      { DATABASE_PATH: productionDatabase.databasePath, NODE_ENV: 'production', ALLOW_DEMO_DATA_IN_PRODUCTION: 'on', WEBHOOK_WORKER: 'off', NODE_OPTIONS: '' },
      npmScriptNodeArguments('start:production'),
      project,
    );
    try {
      expect((await new ContractClient(server.url).get('/api/v1/portfolio', { authorization: `Bearer ${fixture.portfolio.apiKey}` })).status).toBe(200);
      const workPlatform = new ContractClient(server.url, 'work-platform', 'Problem');
      expect((await workPlatform.get('/v1/tasks?limit=5', { authorization: `Bearer ${fixture.workPlatform.tokens.all}` })).status).toBe(200);
      expect((await workPlatform.get('/v1/docs')).status).toBe(200);
      // oidc-provider and the MCP SDK are loaded on first use: each surface once.
      expect((await fetch(`${server.url}/.well-known/oauth-authorization-server`)).status).toBe(200);
      const mcp = await fetch(`${server.url}/v1/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fixture.workPlatform.tokens.all}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } }),
      });
      expect(mcp.status).toBe(200);
    } finally {
      expect(await stopServerProcesses([server.child])).toEqual([0]);
    }
    const admin = spawnSync(process.execPath, [...npmScriptNodeArguments('admin:production'), 'tenant', 'list', '--json'], {
      cwd: project,
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '', DATABASE_PATH: productionDatabase.databasePath },
      timeout: 30_000,
    });
    expect(admin.stderr).toBe('');
    expect((JSON.parse(admin.stdout) as { tenants: { id: string }[] }).tenants.map((tenant) => tenant.id)).toContain(fixture.portfolio.tenantId);
  });
});
