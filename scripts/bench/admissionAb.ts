// npx tsx scripts/bench/admissionAb.ts <other checkout> [redis url]: the admission path of this
// checkout against another one (a commit exported with git archive, its node_modules linked), each
// server in its own process on one database, loaded by autocannon in a process of its own in
// alternating rounds (A, B, A, B, …), so that a machine whose load changes during the run weighs on
// both alike. Prints the median req/s of each server per scenario and the ratio to the first, and
// the server's CPU time per request (from /proc, Linux), which a busy machine disturbs far less.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { issueApiKey } from '../../src/auth/apiKeys.js';
import { loadDemoData } from '../../src/demo/demoData.js';
import { createApiKeyStore } from '../../src/store/apiKeys.js';
import { openDatabase } from '../../src/store/database.js';
import { createWorkspaceStore } from '../../src/store/workspaces.js';
import type { LoadResult } from './loadGenerator.js';

const ROUNDS = Number(process.env.AB_ROUNDS ?? 5);
const SECONDS = Number(process.env.AB_SECONDS ?? 3);
const repoRoot = path.resolve(import.meta.dirname, '../..');
const [otherCheckout, redisUrl] = process.argv.slice(2);
if (!otherCheckout) throw new Error('usage: admissionAb.ts <other checkout> [redis url]');

function startServer(root: string, env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--max-semi-space-size=4', '--heap-growing-percent=50', '--import', 'tsx', 'src/server.ts'], {
    cwd: root,
    env: { ...process.env, NODE_ENV: 'production', ALLOW_DEMO_DATA_IN_PRODUCTION: 'on', PORT: '0', HOST: '127.0.0.1', LOG_REQUESTS: 'off', WEBHOOK_WORKER: 'off', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve({ child, url: match[1]! });
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`)));
  });
}

function load(url: string, headers: Record<string, string>): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'scripts/bench/loadGenerator.ts'), JSON.stringify({ url, connections: 10, seconds: SECONDS, headers })], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as LoadResult) : reject(new Error(`load generator exited ${code}`))));
  });
}

/** User + system CPU of a process so far, in ms (Linux /proc; clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const dir = mkdtempSync(path.join(os.tmpdir(), 'admission-ab-'));
const children: ChildProcess[] = [];
try {
  const databasePath = path.join(dir, 'app.db');
  const db = openDatabase(databasePath);
  const demo = await loadDemoData(db, Date.now, {});
  const key = (await issueApiKey(createApiKeyStore(db), { tenantId: demo.portfolio.tenantId, rateLimit: 1_000_000_000 })).key;
  await createWorkspaceStore(db).setWorkspaceLimits(demo.workPlatform.workspaceId, { readPerMinute: 1_000_000, monthlyQuota: 1_000_000_000 });
  db.close();
  const env = { DATABASE_PATH: databasePath, PORTFOLIO_RATE_LIMIT: '1000000000' };
  const servers: { name: string; url: string; pid: number }[] = [];
  const add = async (name: string, root: string, extra: Record<string, string> = {}) => {
    const server = await startServer(root, { ...env, ...extra });
    children.push(server.child);
    servers.push({ name, url: server.url, pid: server.child.pid! });
  };
  await add(`before (${path.basename(otherCheckout)})`, path.resolve(otherCheckout));
  await add('after, SQLite', repoRoot);
  if (redisUrl) await add('after, REDIS_URL', repoRoot, { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: `ab-${Date.now()}:` });
  const scenarios = [
    { name: 'GET /api/v1/profile', path: '/api/v1/profile', headers: { authorization: `Bearer ${key}` } },
    { name: 'GET /v1/tasks?limit=1 (PAT: bucket + quota)', path: '/v1/tasks?limit=1', headers: { authorization: `Bearer ${demo.workPlatform.tokens.all}` } },
  ];
  for (const scenario of scenarios) {
    const figures = new Map<string, number[]>(servers.map((server) => [server.name, []]));
    const cpuPerRequest = new Map<string, number[]>(servers.map((server) => [server.name, []]));
    for (const server of servers) await load(`${server.url}${scenario.path}`, scenario.headers); // warm-up
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const server of servers) {
        const cpuBefore = cpuMs(server.pid);
        const result = await load(`${server.url}${scenario.path}`, scenario.headers);
        if (result.non2xx > 0) throw new Error(`${server.name} ${scenario.path}: ${result.non2xx} non-2xx answers`);
        figures.get(server.name)!.push(result.requestsPerSecond);
        cpuPerRequest.get(server.name)!.push(((cpuMs(server.pid) - cpuBefore) * 1000) / (result.requestsPerSecond * SECONDS));
      }
    }
    const reference = median(figures.get(servers[0]!.name)!);
    const cpuReference = median(cpuPerRequest.get(servers[0]!.name)!);
    process.stdout.write(`\n${scenario.name} (${ROUNDS} alternating rounds of ${SECONDS} s, 10 connections)\n`);
    for (const server of servers) {
      const values = figures.get(server.name)!;
      const cpu = median(cpuPerRequest.get(server.name)!);
      process.stdout.write(
        `  ${server.name.padEnd(20)} median ${Math.round(median(values)).toString().padStart(6)} req/s  × ${(median(values) / reference).toFixed(3)}   server CPU ${Math.round(cpu).toString().padStart(4)} µs/request  × ${(cpu / cpuReference).toFixed(3)}   req/s rounds: ${values.map(Math.round).join(', ')}\n`,
      );
    }
  }
} finally {
  for (const child of children) child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
