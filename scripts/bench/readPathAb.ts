// npx tsx scripts/bench/readPathAb.ts <other checkout> [--redis URL] [--cpu-prof DIR]: the read path of this checkout
// against another one (a commit exported with git archive, its node_modules linked), each server as
// `npm start` runs it in a process of its own on one database, loaded by wrk (or autocannon) in a
// process of its own in alternating rounds (A, B, B, A, …), so that a machine whose load changes
// during the run weighs on both alike. Prints per scenario the median req/s of each server and its
// CPU time per request (from /proc, Linux), which a busy machine disturbs far less, then each
// server's per-request budget (PHASE_TIMINGS_FILE) for the loaded operations. With --redis, a third
// server of this checkout counts its limits in that Redis (under a key prefix of its own).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { npmScriptEnvironment, npmScriptNodeArguments } from '../npmScriptArguments.js';
import type { OperationBudget } from '../../src/contract/phaseTimings.js';
import type { LoadResult } from './loadGenerator.js';
import { benchServerEnvironment } from './apiServerProcess.js';
import { cpuMilliseconds } from './processFigures.js';
import { seedBenchDatabase } from './seed.js';
import { median } from './median.js';
import { printHelpWhenAsked } from './helpWhenAsked.js';

printHelpWhenAsked(import.meta.filename);

const ROUNDS = Number(process.env.AB_ROUNDS ?? 5);
const SECONDS = Number(process.env.AB_SECONDS ?? 3);
// AB_ONLY=portfolio, AB_ONLY=tasks or AB_ONLY=POST: one scenario (a profile of one operation).
const repoRoot = path.resolve(import.meta.dirname, '../..');
const { values, positionals } = parseArgs({ allowPositionals: true, options: { 'cpu-prof': { type: 'string' }, redis: { type: 'string' } } });
const [otherCheckout] = positionals;
if (!otherCheckout) throw new Error('usage: readPathAb.ts <other checkout> [--redis URL] [--cpu-prof DIR]');

interface Server {
  name: string;
  url: string;
  child: ChildProcess;
  phasesFile: string;
}

function startServer(name: string, root: string, env: Record<string, string>): Promise<Server> {
  const profile = values['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(values['cpu-prof'], name)] : [];
  const child = spawn(process.execPath, [...profile, ...npmScriptNodeArguments('start', root)], {
    cwd: root,
    env: {
      ...process.env,
      ...npmScriptEnvironment('start', root),
      NODE_ENV: 'production',
      ALLOW_DEMO_DATA_IN_PRODUCTION: 'on',
      ...benchServerEnvironment,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve({ name, url: match[1]!, child, phasesFile: env.PHASE_TIMINGS_FILE! });
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`)));
  });
}

function stopServer(server: Server): Promise<void> {
  if (server.child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    server.child.once('exit', () => resolve());
    server.child.kill('SIGTERM');
  });
}

function load(url: string, headers: Record<string, string>, createTasks?: { token: string; projectId: string }): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'scripts/bench/loadGenerator.ts'), JSON.stringify({ url, connections: 10, seconds: SECONDS, headers, createTasks })], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as LoadResult) : reject(new Error(`load generator exited ${code}`))));
  });
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'read-path-ab-'));
const servers: Server[] = [];
try {
  const databasePath = path.join(dir, 'app.db');
  const bench = await seedBenchDatabase(databasePath, [1000]);
  const env = { DATABASE_PATH: databasePath };
  servers.push(await startServer('before', path.resolve(otherCheckout), { ...env, PHASE_TIMINGS_FILE: path.join(dir, 'phases-before.json') }));
  servers.push(await startServer('after', repoRoot, { ...env, PHASE_TIMINGS_FILE: path.join(dir, 'phases-after.json') }));
  if (values.redis) {
    servers.push(await startServer('redis', repoRoot, { ...env, REDIS_URL: values.redis, REDIS_KEY_PREFIX: `ab-${Date.now()}:`, PHASE_TIMINGS_FILE: path.join(dir, 'phases-redis.json') }));
  }
  const scenarios = [
    { name: 'GET /api/v1/portfolio', path: '/api/v1/portfolio', headers: { authorization: `Bearer ${bench.portfolioKey}` } },
    { name: 'GET /v1/tasks?limit=50 (page kept)', path: '/v1/tasks?limit=50', headers: { authorization: `Bearer ${bench.workspaces[0]!.token}` } },
    {
      name: 'POST /v1/tasks (a new Idempotency-Key each)',
      path: '/v1/tasks',
      headers: {},
      createTasks: { token: bench.workspaces[0]!.token, projectId: bench.workspaces[0]!.projectId },
    },
  ] as { name: string; path: string; headers: Record<string, string>; createTasks?: { token: string; projectId: string } }[];
  for (const scenario of scenarios.filter(({ name }) => !process.env.AB_ONLY || name.includes(process.env.AB_ONLY))) {
    const rates = new Map<string, number[]>(servers.map((server) => [server.name, []]));
    const cpuPerRequest = new Map<string, number[]>(servers.map((server) => [server.name, []]));
    for (const server of servers) await load(`${server.url}${scenario.path}`, scenario.headers, scenario.createTasks); // warm-up
    for (let round = 0; round < ROUNDS; round += 1) {
      // A, B, then B, A: neither server is always the one loaded right after the other.
      for (const server of round % 2 === 0 ? servers : [...servers].reverse()) {
        const cpuBefore = cpuMilliseconds(server.child.pid!);
        const result = await load(`${server.url}${scenario.path}`, scenario.headers, scenario.createTasks);
        if (result.non2xx > 0) throw new Error(`${server.name} ${scenario.path}: ${result.non2xx} non-2xx answers`);
        rates.get(server.name)!.push(result.requestsPerSecond);
        cpuPerRequest.get(server.name)!.push(((cpuMilliseconds(server.child.pid!) - cpuBefore) * 1000) / (result.requestsPerSecond * SECONDS));
      }
    }
    const reference = median(rates.get(servers[0]!.name)!);
    const cpuReference = median(cpuPerRequest.get(servers[0]!.name)!);
    process.stdout.write(`\n${scenario.name} (${ROUNDS} alternating rounds of ${SECONDS} s, 10 connections)\n`);
    for (const server of servers) {
      const list = rates.get(server.name)!;
      const cpu = median(cpuPerRequest.get(server.name)!);
      process.stdout.write(
        `  ${server.name.padEnd(8)} median ${Math.round(median(list)).toString().padStart(6)} req/s  × ${(median(list) / reference).toFixed(3)}   server CPU ${Math.round(cpu).toString().padStart(4)} µs/request (rounds ${cpuPerRequest.get(server.name)!.map(Math.round).join(', ')})  × ${(cpu / cpuReference).toFixed(3)}   req/s rounds: ${list.map(Math.round).join(', ')}\n`,
      );
    }
  }
  await Promise.all(servers.map(stopServer));
  process.stdout.write('\nPer-request budget, µs per call (wall, PHASE_TIMINGS_FILE)\n');
  for (const server of servers) {
    const budgets = JSON.parse(readFileSync(server.phasesFile, 'utf8')) as OperationBudget[];
    for (const budget of budgets.filter(({ operationId }) => operationId === 'getPortfolio' || operationId === 'listTasks')) {
      process.stdout.write(`  ${server.name.padEnd(8)} ${budget.operationId.padEnd(14)} ${JSON.stringify(budget.microsecondsPerCall)}\n`);
    }
  }
} finally {
  await Promise.all(servers.map(stopServer));
  rmSync(dir, { recursive: true, force: true });
}
