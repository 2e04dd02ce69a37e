// A real redis-server for the tests: its own port and temp folder, no persistence, stopped by the
// test that started it. Fails (never skips) when redis-server is not installed.
import { spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { freePort } from './freePort.js';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, inject } from 'vitest';
import { joinOrStart, startedInRendezvous } from './rendezvous.js';
import { assertRedisInstalled, exited, redisServerArguments, redisServerBinary, startLocalRedis } from '../../scripts/localEngines.js';


export interface RedisServer {
  port: number;
  /** `redis://127.0.0.1:<port>` (with the password, if any) */
  url: string;
  /** SIGKILL: the server is gone at once, as in a crash (nothing is persisted). */
  kill(): Promise<void>;
  /** Starts it again on the same port (after kill). */
  restart(): Promise<void>;
  /** SIGSTOP / SIGCONT: the server keeps its connections but answers nothing until resumed. */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

function launch(port: number, dir: string, password: string | undefined): Promise<ChildProcess> {
  return startLocalRedis({ port, dir, password });
}

/** Starts redis-server on a free port of 127.0.0.1 with `--save '' --appendonly no` in a temp folder (and a password when given). */
export async function startRedisServer(options: { password?: string } = {}): Promise<RedisServer> {
  assertRedisInstalled();
  const dir = mkdtempSync(path.join(tmpdir(), 'test-redis-'));
  let port = 0;
  let child: ChildProcess | undefined;
  // Another process may take the free port before redis-server binds it: try another.
  for (let attempt = 0; attempt < 5 && !child; attempt += 1) {
    port = await freePort();
    child = await launch(port, dir, options.password).catch((error: unknown) => {
      if (attempt === 4) throw error;
      return undefined;
    });
  }
  let current = child!;
  return {
    port,
    url: options.password === undefined ? `redis://127.0.0.1:${port}` : `redis://:${encodeURIComponent(options.password)}@127.0.0.1:${port}`,
    async kill() {
      current.kill('SIGKILL');
      await exited(current);
    },
    async restart() {
      current = await launch(port, dir, options.password);
    },
    pause() {
      current.kill('SIGSTOP');
    },
    resume() {
      current.kill('SIGCONT');
    },
    async stop() {
      current.kill('SIGCONT');
      current.kill('SIGTERM');
      await exited(current);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Starts a redis-server before the file's tests and stops it after them; the getter hands it to the tests. */
export function useRedisServer(): () => RedisServer {
  let server: RedisServer | undefined;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.stop();
  });
  return () => {
    if (!server) throw new Error('the Redis server is started in beforeAll');
    return server;
  };
}

/** The environment of a server (or test app) that counts its limits in `server`, under a key prefix of its own. */
export function redisLimitsEnv(server: Pick<RedisServer, 'url'>): Record<string, string> {
  return { REDIS_URL: server.url, REDIS_KEY_PREFIX: `test-${randomUUID()}:` };
}

/**
 * Where the limit suites count: SQLite alone (no REDIS_URL), and a real Redis; `env` is read when a
 * test app starts. On PostgreSQL (TEST_ENGINE=postgres) the test app counts in a Redis of its own
 * already, so that both would be one configuration: it runs once.
 */
export function limitEngines(redis: () => RedisServer): { engine: string; env: () => Record<string, string> }[] {
  if (process.env.TEST_ENGINE === 'postgres') return [{ engine: 'Redis', env: () => ({}) }];
  return [
    { engine: 'SQLite', env: () => ({}) },
    { engine: 'Redis', env: () => redisLimitsEnv(redis()) },
  ];
}

/** Where the run's shared redis-server listens, and the file its process id is in. */
interface SharedRedisLocation {
  port: number;
  pidFile: string;
}

let sharedRedis: Promise<string> | undefined;

/**
 * The URL of the test run's redis-server, for the test apps on PostgreSQL, which count their limits in it each under a
 * key prefix of its own (redisLimitsEnv). As the shared PostgreSQL server (postgresServer.ts): whichever test process
 * asks first starts it, detached (its own daemon, so that it outlives that process), and writes where it listens into
 * the run's rendezvous folder; the global teardown stops it. A test that stops, pauses or kills its Redis starts one of
 * its own (startRedisServer).
 */
export function sharedRedisUrl(): Promise<string> {
  const rendezvous = inject('postgresRendezvous');
  sharedRedis ??= joinOrStart(rendezvous, 'redis', () => startDetachedRedis(path.join(rendezvous, 'redis-server')), 30_000).then(({ port }) => `redis://127.0.0.1:${port}`);
  return sharedRedis;
}

async function startDetachedRedis(dir: string): Promise<SharedRedisLocation> {
  assertRedisInstalled();
  mkdirSync(dir, { recursive: true });
  const pidFile = path.join(dir, 'redis.pid');
  let failure = '';
  // Another process may take the free port before redis-server binds it: try another.
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const port = await freePort();
    const logFile = path.join(dir, `redis-${port}.log`);
    const started = spawnSync(redisServerBinary(), [...redisServerArguments({ port, dir }), '--daemonize', 'yes', '--pidfile', pidFile, '--logfile', logFile], {
      encoding: 'utf8',
    });
    if (started.status !== 0) throw new Error(`redis-server did not start: ${started.stderr}${started.stdout}`);
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const log = existsSync(logFile) ? readFileSync(logFile, 'utf8') : '';
      if (/Ready to accept connections/.test(log)) return { port, pidFile };
      if (/# (Could not create|Failed listening|Warning: Could not create)/.test(log)) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    failure = existsSync(logFile) ? readFileSync(logFile, 'utf8') : 'no log';
  }
  throw new Error(`redis-server did not become ready: ${failure}`);
}

/** For the global teardown: stops the run's redis-server (by the process id it wrote) if a test started one. */
export async function stopSharedRedisServer(rendezvous: string): Promise<void> {
  const location = startedInRendezvous<SharedRedisLocation>(rendezvous, 'redis');
  if (!location || !existsSync(location.pidFile)) return;
  const pid = Number(readFileSync(location.pidFile, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 1) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return; // already gone
  }
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  process.kill(pid, 'SIGKILL');
}
