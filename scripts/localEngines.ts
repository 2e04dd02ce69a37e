// PostgreSQL and Redis from the Debian packages, started by this user on this machine: for the
// tests (a throwaway server per run), the bench and `npm run scaled-out` (servers that keep their
// data in a folder of the project). Nothing here is used by the server itself.
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The superuser every local server is created with (trust authentication on 127.0.0.1 and its socket folder only). */
export const postgresSuperuser = 'app';

/** initdb and pg_ctl from PATH, else from the newest /usr/lib/postgresql/<version>/bin (Debian's place). */
export function findPostgresBinaries(): { initdb: string; pgCtl: string } {
  const onPath = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean);
  const debian = existsSync('/usr/lib/postgresql')
    ? readdirSync('/usr/lib/postgresql')
        .filter((version) => /^\d+$/.test(version))
        .sort((a, b) => Number(b) - Number(a))
        .map((version) => `/usr/lib/postgresql/${version}/bin`)
    : [];
  for (const dir of [...onPath, ...debian]) {
    if (existsSync(path.join(dir, 'initdb')) && existsSync(path.join(dir, 'pg_ctl'))) {
      return { initdb: path.join(dir, 'initdb'), pgCtl: path.join(dir, 'pg_ctl') };
    }
  }
  throw new Error(
    'A local PostgreSQL server needs initdb and pg_ctl, found neither on PATH nor under /usr/lib/postgresql/*/bin. ' +
      'Install it with: apt-get install -y postgresql',
  );
}

const isRoot = process.getuid?.() === 0;

/** initdb and the server refuse to run as root: as root they run as the `postgres` user. */
function asServerUser(binary: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  return isRoot ? run('runuser', ['-u', 'postgres', '--', binary, ...args]) : run(binary, args);
}

function postgresUserIds(): [number, number] {
  const entry = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((line) => line.startsWith('postgres:'));
  if (!entry) throw new Error('Running as root, a local PostgreSQL needs the `postgres` user that the Debian package creates: apt-get install -y postgresql');
  const [, , uid, gid] = entry.split(':');
  return [Number(uid), Number(gid)];
}

/** Hands a folder to the user the server runs as (root runs it as `postgres`). */
export function giveToPostgresUser(folder: string): void {
  if (isRoot) chownSync(folder, ...postgresUserIds());
}

export interface LocalPostgresOptions {
  /** Holds `data/` (the cluster, made by initdb when missing), the socket and `server.log`. Must exist. */
  folder: string;
  port: number;
  /** false: no fsync, no full-page writes (a test's throwaway data); true: PostgreSQL's defaults. */
  durable: boolean;
  maxConnections?: number;
}

/**
 * Starts PostgreSQL on 127.0.0.1:`port` from `folder`, creating its cluster first when the folder
 * has none (UTF-8, C.UTF-8 collation: text sorts by code point, as the API does). Answers the URL of
 * the `postgres` database as the superuser `app`.
 */
export async function startLocalPostgres(options: LocalPostgresOptions): Promise<string> {
  const { initdb, pgCtl } = findPostgresBinaries();
  const dataDir = path.join(options.folder, 'data');
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    const args = ['-D', dataDir, '-A', 'trust', '-U', postgresSuperuser, '-E', 'UTF8', '--locale=C.UTF-8'];
    await asServerUser(initdb, options.durable ? args : [...args, '--no-sync']);
  }
  const throwaway = options.durable ? '' : ' -c fsync=off -c synchronous_commit=off -c full_page_writes=off';
  const settings = `-p ${options.port} -k ${options.folder} -c listen_addresses=127.0.0.1 -c max_connections=${options.maxConnections ?? 200}${throwaway}`;
  const log = path.join(options.folder, 'server.log');
  try {
    await asServerUser(pgCtl, ['-D', dataDir, '-l', log, '-o', settings, '-w', '-t', '30', 'start']);
  } catch (error) {
    const tail = existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(-20).join('\n') : '';
    throw new Error(`PostgreSQL did not start: ${error instanceof Error ? error.message : String(error)}\n${tail}`);
  }
  return `postgres://${postgresSuperuser}@127.0.0.1:${options.port}/postgres`;
}

/** Stops the server of `folder`, if it runs: `immediate` for throwaway data, `fast` (a clean shutdown) otherwise. */
export async function stopLocalPostgres(folder: string, mode: 'fast' | 'immediate'): Promise<void> {
  const dataDir = path.join(folder, 'data');
  if (!existsSync(path.join(dataDir, 'postmaster.pid'))) return;
  const { pgCtl } = findPostgresBinaries();
  await asServerUser(pgCtl, ['-D', dataDir, '-m', mode, '-w', 'stop']).catch(() => undefined);
}

export const redisServerBinary = () => process.env.REDIS_SERVER_PATH || 'redis-server';

export function assertRedisInstalled(): void {
  const probe = spawnSync(redisServerBinary(), ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      `redis-server was not found (${redisServerBinary()}): install it with \`apt-get install -y redis-server\` (Debian), or set REDIS_SERVER_PATH.`,
    );
  }
}

export interface LocalRedisOptions {
  port: number;
  /** Its working folder (an append-only file there when `durable`). */
  dir: string;
  password?: string;
  /** true: append-only file, so that counts survive a restart; false: nothing persisted. */
  durable?: boolean;
}

/** Starts redis-server on 127.0.0.1 and resolves once it accepts connections; its output is drained from then on. */
/** redis-server's arguments for a server on 127.0.0.1 that keeps no snapshot, and an append-only file only when `durable`. */
export function redisServerArguments(options: LocalRedisOptions): string[] {
  const args = ['--port', String(options.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', options.durable ? 'yes' : 'no', '--dir', options.dir, '--loglevel', 'notice'];
  if (options.password !== undefined) args.push('--requirepass', options.password);
  return args;
}

export function startLocalRedis(options: LocalRedisOptions): Promise<ChildProcess> {
  const child = spawn(redisServerBinary(), redisServerArguments(options), { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/Ready to accept connections/.test(output)) {
        child.stdout!.off('data', onData);
        // Drained from now on, so a full pipe never stalls the server.
        child.stdout!.resume();
        child.stderr!.resume();
        child.off('exit', onExit);
        resolve(child);
      }
    };
    const onExit = (code: number | null) => reject(new Error(`redis-server exited with ${code} before it was ready: ${output}`));
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', onExit);
  });
}

/** Resolves when the process has exited (at once if it already has). */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** A loopback port no one listens on now (the OS picks it), for a server started as a process of its own. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
