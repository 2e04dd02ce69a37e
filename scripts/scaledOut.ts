// `npm run scaled-out`: the scaled-out setup on this machine, from the Debian packages — one
// PostgreSQL and one Redis keeping their data under data/scaled-out/, several API server processes
// (each on its own port) and several webhook delivery workers, all sharing them, their output
// prefixed by process. Ctrl-C stops everything cleanly; the next start finds the data again.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { generateSecret, generateSigningJwk } from '../src/auth/serverSecrets.js';
import { sharedSecretNames } from '../src/config.js';
import { projectFile } from '../src/projectFiles.js';
import { exited, freePort, giveToPostgresUser, startLocalPostgres, startLocalRedis, stopLocalPostgres, assertRedisInstalled } from './localEngines.js';

const HELP = `Usage: npm run scaled-out [-- options]

Starts the scaled-out setup on this machine: PostgreSQL and Redis from the Debian packages
(apt-get install -y postgresql redis-server), their data kept in the folder given by --dir, then
the API server processes (npm start, WEBHOOK_WORKER=off) on consecutive ports and the webhook
delivery workers (npm run worker, each with a probe listener on a free port: WORKER_HEALTH_PORT),
all on that one PostgreSQL (DATABASE_URL) and Redis (REDIS_URL). Each process is waited for
until its GET /readyz answers 200.
The first start creates the database and the secrets every process shares (<dir>/secrets.env,
mode 0600); the database starts empty: load the demo data set (npm run admin -- demo) or create
tenants, keys, workspaces and tokens with the admin CLI line printed at start. Ctrl-C (SIGINT) or SIGTERM stops
the servers and workers (open requests and attempts finish), then Redis and PostgreSQL.

Options:
  --instances N   API server processes (default 2), on ports --port, --port + 1, …
  --workers N     webhook delivery worker processes (default 2)
  --port P        port of the first server (default 3000)
  --dir D         where PostgreSQL, Redis and the secrets keep their data (default data/scaled-out)
  -h, --help      this text
`;

const databaseName = 'contract_api';
/** Like `npm start` and `npm run worker` (package.json). */
const nodeFlags = ['--max-semi-space-size=4', '--heap-growing-percent=50', '--import', 'tsx'];

interface Running {
  name: string;
  child: ChildProcess;
}

function prefixLines(name: string, stream: NodeJS.ReadableStream, out: NodeJS.WritableStream): void {
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) out.write(`[${name}] ${line}\n`);
  });
  stream.on('end', () => rest && out.write(`[${name}] ${rest}\n`));
}

/** The shared secrets of this setup: made on the first start, read on every later one. */
function sharedSecrets(dir: string): Record<string, string> {
  const file = path.join(dir, 'secrets.env');
  if (!existsSync(file)) {
    const lines = sharedSecretNames.map((name) => `${name}='${name === 'OAUTH_SIGNING_JWK' ? generateSigningJwk() : generateSecret()}'`);
    writeFileSync(file, `${lines.join('\n')}\n`, { mode: 0o600 });
  }
  return Object.fromEntries(
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => {
        const [, name, value] = /^([A-Z_]+)='(.*)'$/.exec(line) ?? [];
        if (!name || value === undefined) throw new Error(`${file} has a line that is not NAME='value': delete the file to make new secrets`);
        return [name, value];
      }),
  );
}

async function ensureDatabase(serverUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [databaseName]);
    if (!rowCount) await client.query(`CREATE DATABASE ${databaseName}`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${databaseName}`;
  return url.toString();
}

/** Polls the process's /readyz (docs/operations.md, "Health and drain") until it answers 200. */
async function waitUntilReady(name: string, port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${name} (port ${port}) exited before it was ready`);
    const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${name} (port ${port}) was not ready (GET /readyz) within 60 s`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      instances: { type: 'string', default: '2' },
      workers: { type: 'string', default: '2' },
      port: { type: 'string', default: '3000' },
      dir: { type: 'string', default: 'data/scaled-out' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  const count = (name: string, raw: string, min: number) => {
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min) throw new Error(`--${name} must be an integer ≥ ${min}, got "${raw}"`);
    return value;
  };
  const instances = count('instances', values.instances, 1);
  const workers = count('workers', values.workers, 0);
  const firstPort = count('port', values.port, 1);
  const dir = path.resolve(values.dir);
  assertRedisInstalled();

  const postgresFolder = path.join(dir, 'postgres');
  const redisFolder = path.join(dir, 'redis');
  mkdirSync(postgresFolder, { recursive: true });
  mkdirSync(redisFolder, { recursive: true });
  giveToPostgresUser(postgresFolder);
  const running: Running[] = [];
  let redis: ChildProcess | undefined;
  let stopping = false;

  const stopAll = async (exitCode: number) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write('\nStopping the servers and workers (open requests and attempts finish), then Redis and PostgreSQL...\n');
    for (const { child } of running) child.kill('SIGTERM');
    await Promise.all(running.map(({ child }) => exited(child)));
    if (redis) {
      redis.kill('SIGTERM');
      await exited(redis);
    }
    await stopLocalPostgres(postgresFolder, 'fast');
    process.stdout.write('Stopped.\n');
    process.exit(exitCode);
  };
  process.once('SIGINT', () => void stopAll(0));
  process.once('SIGTERM', () => void stopAll(0));

  try {
    const postgresPort = await freePort();
    const serverUrl = await startLocalPostgres({ folder: postgresFolder, port: postgresPort, durable: true });
    const databaseUrl = await ensureDatabase(serverUrl);
    const redisPort = await freePort();
    redis = await startLocalRedis({ port: redisPort, dir: redisFolder, durable: true });
    const env = {
      ...process.env,
      ...sharedSecrets(dir),
      DATABASE_URL: databaseUrl,
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      WEBHOOK_WORKER: 'off',
    };
    const start = (name: string, entry: string, extraEnv: Record<string, string>) => {
      // Detached: a terminal's Ctrl-C reaches the launcher alone, which stops each child once, in order.
      const child = spawn(process.execPath, [...nodeFlags, projectFile(entry)], { env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      prefixLines(name, child.stdout!, process.stdout);
      prefixLines(name, child.stderr!, process.stderr);
      running.push({ name, child });
      child.once('exit', (code, signal) => {
        if (stopping) return;
        process.stderr.write(`[${name}] exited (${signal ?? `code ${code}`}): stopping the rest\n`);
        void stopAll(1);
      });
      return child;
    };
    // The first server migrates; the others start once it serves.
    const ports = Array.from({ length: instances }, (_, index) => firstPort + index);
    for (const [index, port] of ports.entries()) {
      const child = start(`api-${index + 1}`, 'src/server.ts', { PORT: String(port) });
      if (index === 0) await waitUntilReady('api-1', port, child);
    }
    await Promise.all(ports.slice(1).map((port, index) => waitUntilReady(`api-${index + 2}`, port, running[index + 1]!.child)));
    // Each worker's probe listener on a free port of its own (WORKER_HEALTH_PORT).
    const workerPorts: number[] = [];
    for (let index = 0; index < workers; index += 1) {
      const healthPort = await freePort();
      workerPorts.push(healthPort);
      const child = start(`worker-${index + 1}`, 'src/worker.ts', { HOST: '127.0.0.1', WORKER_HEALTH_PORT: String(healthPort) });
      await waitUntilReady(`worker-${index + 1}`, healthPort, child);
    }
    process.stdout.write(
      [
        '',
        `Scaled-out setup running (data in ${dir}):`,
        ...ports.map((port, index) => `  api-${index + 1}:  http://127.0.0.1:${port}  (/api/v1, /v1; probes /livez, /readyz)`),
        ...workerPorts.map((port, index) => `  worker-${index + 1}: probes http://127.0.0.1:${port}/livez, /readyz`),
        `  PostgreSQL: ${databaseUrl}`,
        `  Redis:      redis://127.0.0.1:${redisPort}`,
        `  admin CLI:  set -a; . ${path.join(dir, 'secrets.env')}; DATABASE_URL=${databaseUrl} npm run admin -- <command>`,
        '  Ctrl-C stops everything.',
        '',
      ].join('\n') + '\n',
    );
  } catch (error) {
    process.stderr.write(`Scaled-out start failed: ${error instanceof Error ? error.message : String(error)}\n`);
    await stopAll(1);
  }
}

void main();
