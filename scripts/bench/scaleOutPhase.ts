// The scale-out phase of `npm run bench`: the same scenarios on (a) one server on SQLite, the
// reference of this run, (b) one server on PostgreSQL + Redis and (c) two servers on that same
// PostgreSQL + Redis loaded at once by two load generators (one per server, the connections split
// so that their sum is (b)'s), each server and generator a process of its own. PostgreSQL and
// redis-server are the Debian packages' (scripts/localEngines.ts), started in the bench's folder;
// the phase is skipped with its reason when they are missing.
//
// What keeps the figures honest: both engines get the same data from the same seed code; every
// scenario is checked to answer as it should on every server before it is loaded; the two
// generators of (c) warm up together and start their measured runs together, and the summed rate
// is their requests over the span from the first start to the last end, never each one's rate
// over its own window; non-2xx answers are counted (a 429 or 503 means a limit was not lifted or
// serialization retries ran out) and so are the serialization failures PostgreSQL logged; and
// beside every figure the share of the machine's CPU that was busy and where the CPU went
// (server, PostgreSQL, Redis per request), since on a 2-core machine two servers, PostgreSQL and
// the generators compete for the same cores.
import type { ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { generateSecret, generateSigningJwk } from '../../src/auth/serverSecrets.js';
import { sharedSecretNames } from '../../src/config.js';
import { demoTenants } from '../../src/demo/demoData.js';
import { openStore } from '../../src/openStore.js';
import { importPortfolio } from '../../src/portfolio/import/importPortfolio.js';
import { openDatabase } from '../../src/store/database.js';
import { engineOf, type StoreSource } from '../../src/store/engine.js';
import { createTenantStore } from '../../src/store/tenants.js';
import {
  assertRedisInstalled,
  exited,
  findPostgresBinaries,
  freePort,
  giveToPostgresUser,
  startLocalPostgres,
  startLocalRedis,
  stopLocalPostgres,
} from '../localEngines.js';
import { startApiServer, type ApiServerProcess } from './apiServerProcess.js';
import type { LoadResult, LoadScenario } from './loadGenerator.js';
import { startSteppedLoadGenerator, type SteppedLoadGenerator } from './loadGeneratorProcess.js';
import { clockTicksPerSecond, processAndChildrenTicks, processTicks } from './processFigures.js';
import { seedBenchData, type BenchData } from './seed.js';
import { median } from './median.js';

export interface ScaleOutSettings {
  /** The bench's temporary folder: the phase works in scale-out/ inside it. */
  dataDir: string;
  /** Tasks in the workspace the task scenarios use, on each engine. */
  taskRows: number;
  /** Connections of (a) and (b); (c) splits them between its two generators. */
  connections: number;
  duration: number;
  warmup: number;
  /** Runs of one instance on each engine per scenario, the first included: the ratio is their median. */
  rounds: number;
}

/** Where the CPU went during one measured run, per request: milliseconds of CPU time. */
export interface CpuUse {
  /** Of all cores together, 0–100. */
  machineBusyPercent: number;
  serverMsPerRequest: number;
  postgresMsPerRequest: number;
  redisMsPerRequest: number;
  /**
   * The machine's busy CPU less the servers', PostgreSQL's and Redis's, per request: the load generators, the
   * kernel's network work, and anything else that ran meanwhile (a PostgreSQL backend that ended during the run too).
   * A row far above its neighbours was disturbed.
   */
  restMsPerRequest: number;
}

/**
 * Transactions PostgreSQL refused during a run, from its log (every refusal is logged as an ERROR
 * when it happens, where pg_stat_database may lag by a second): each serialization failure or
 * deadlock is one run of a transaction thrown away and started again.
 */
export interface PostgresRefusals {
  serializationFailures: number;
  /**
   * Where most serialization failures happened, at most three places: the statement (or the
   * trigger's statement), its first 100 characters, with PostgreSQL's reason (its DETAIL line) and
   * how many failed there.
   */
  mostAt: { statement: string; reason: string; count: number }[];
  deadlocks: number;
  otherErrors: number;
}

export interface SetupMeasured {
  requestsPerSecond: number;
  /** One value per server (two for the two-instance setup). */
  p50Ms: number[];
  p99Ms: number[];
  non2xx: number;
  /** Answers of 300 and above by status (the writing scenario under wrk). */
  statuses?: Record<string, number>;
  errors: number;
  cpu: CpuUse;
  /** On PostgreSQL. */
  refused?: PostgresRefusals;
  /** Two instances: how far apart the two generators' measured windows started and ended. */
  windowSkewMs?: number;
  perInstance?: LoadResult[];
}

export interface ScaleOutScenarioFigures {
  name: string;
  /** Round trips one request of this scenario makes on one PostgreSQL server, counted from PostgreSQL's statement log and Redis's command count. */
  postgresStatementsPerRequest: number;
  redisCommandsPerRequest: number;
  sqlite: SetupMeasured;
  postgres: SetupMeasured;
  twoInstances: SetupMeasured;
  /** (b) ÷ (a) requests per second: the median of `postgresOverSqliteRounds`. */
  postgresOverSqlite: number;
  /** (b) ÷ (a) in each round: the first run above, then (a) and (b) again, one right after the other. */
  postgresOverSqliteRounds: number[];
  /**
   * A write scenario: (b') ÷ (a), one instance on PostgreSQL + Redis whose commits do not wait for
   * the WAL flush (synchronous_commit=off), the durability SQLite has at synchronous=NORMAL: a crash
   * of the machine may lose the last commits, never corrupts. The median of its rounds.
   */
  atSqliteDurability?: { overSqlite: number; rounds: number[] };
  /** (c) ÷ (b) requests per second. */
  twoOverOne: number;
}

export type ScaleOutFigures =
  | { skipped: string }
  | {
      cores: number;
      loadAverageBefore: number[];
      loadAverageAfter: number[];
      taskRows: number;
      seeding: { sqliteSeconds: number; postgresMigrateSeconds: number; postgresSeedSeconds: number };
      connections: number;
      duration: number;
      warmup: number;
      generator: LoadResult['generator'];
      scenarios: ScaleOutScenarioFigures[];
    };

const databaseName = 'contract_api_bench';

/** Why the phase cannot run here, or undefined when PostgreSQL and redis-server are installed. */
function scaleOutUnavailable(): string | undefined {
  try {
    findPostgresBinaries();
    assertRedisInstalled();
    if (process.getuid?.() === 0 && !readFileSync('/etc/passwd', 'utf8').split('\n').some((line) => line.startsWith('postgres:'))) {
      throw new Error('running as root, PostgreSQL needs the `postgres` user the Debian package creates: apt-get install -y postgresql');
    }
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** The main demo tenant's portfolio and the bench's task workspace, on either engine. */
async function seedScaleOutData(source: StoreSource, taskRows: number): Promise<BenchData> {
  const engine = engineOf(source);
  const tenant = demoTenants.main;
  await createTenantStore(engine).createTenant(tenant.name, { id: tenant.id });
  await importPortfolio(engine, tenant.id, tenant.document);
  return seedBenchData(engine, [taskRows], tenant.id);
}

async function createDatabase(serverUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${databaseName}`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${databaseName}`;
  return url.toString();
}


interface WatchedProcesses {
  servers: number[];
  postmaster: number | undefined;
  redis: number | undefined;
  /** PostgreSQL's server.log. */
  postgresLog?: string;
}

function logSize(file: string | undefined): number {
  return file && existsSync(file) ? statSync(file).size : 0;
}

function refusalsLogged(file: string, from: number): PostgresRefusals {
  const lines = readFileSync(file).subarray(from).toString('utf8').split('\n');
  const errors = lines.filter((line) => /\bERROR:/.test(line));
  const serializationFailures = errors.filter((line) => line.includes('could not serialize access')).length;
  const deadlocks = errors.filter((line) => line.includes('deadlock detected')).length;
  // An ERROR line is followed by its DETAIL (the reason), HINT, CONTEXT (the statement a trigger ran)
  // and STATEMENT lines, up to the next line that starts an entry of its own.
  const places = new Map<string, { statement: string; reason: string; count: number }>();
  for (const [index, line] of lines.entries()) {
    if (!line.includes('could not serialize access')) continue;
    let reason = '';
    let statement = '';
    for (const next of lines.slice(index + 1, index + 8)) {
      const field = /\b(DETAIL|HINT|CONTEXT|STATEMENT):\s+(.*)/.exec(next);
      if (!field) break;
      if (field[1] === 'DETAIL') reason = field[2]!.replace(/^Reason code: /, '').slice(0, 100);
      if ((field[1] === 'CONTEXT' || field[1] === 'STATEMENT') && !statement) statement = field[2]!.slice(0, 100);
    }
    const key = `${statement}\u0000${reason}`;
    const place = places.get(key) ?? { statement: statement || '(not logged)', reason, count: 0 };
    place.count += 1;
    places.set(key, place);
  }
  const mostAt = [...places.values()].sort((a, b) => b.count - a.count).slice(0, 3);
  return { serializationFailures, mostAt, deadlocks, otherErrors: errors.length - serializationFailures - deadlocks };
}

interface CpuSample {
  machineBusy: number;
  machineTotal: number;
  servers: number;
  /** Per process: PostgreSQL's backends come and go (a pool closes idle connections). */
  postgres: Map<number, number>;
  redis: number;
}

function sampleCpu(watched: WatchedProcesses): CpuSample {
  const [, ...counters] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const values = counters.map(Number);
  // user nice system idle iowait irq softirq steal: idle and iowait are the time no work ran, and steal the time the
  // hypervisor ran something else: none of them is this machine's work.
  const total = values.slice(0, 8).reduce((sum, value) => sum + value, 0);
  const idle = values[3]! + values[4]! + values[7]!;
  const postgres = watched.postmaster === undefined ? new Map<number, number>() : processAndChildrenTicks(watched.postmaster);
  const ticksOf = (pid: number | undefined) => (pid === undefined ? 0 : (processTicks(pid)?.ticks ?? 0));
  return {
    machineBusy: total - idle,
    machineTotal: total,
    servers: watched.servers.reduce((sum, pid) => sum + ticksOf(pid), 0),
    postgres,
    redis: ticksOf(watched.redis),
  };
}

function cpuUse(before: CpuSample, after: CpuSample, requests: number): CpuUse {
  const msPerRequest = (ticks: number) => (requests > 0 ? Math.round(((ticks * 1000) / clockTicksPerSecond() / requests) * 1000) / 1000 : 0);
  const total = after.machineTotal - before.machineTotal;
  const servers = after.servers - before.servers;
  // A backend that ended during the run takes its CPU with it: counted low, never negative.
  const postgres = [...after.postgres].reduce((sum, [pid, ticks]) => sum + ticks - (before.postgres.get(pid) ?? 0), 0);
  const redis = after.redis - before.redis;
  // /proc/stat counts the machine in the same clock ticks, summed over the cores.
  const rest = Math.max(0, after.machineBusy - before.machineBusy - servers - postgres - redis);
  return {
    machineBusyPercent: total > 0 ? Math.round(((after.machineBusy - before.machineBusy) / total) * 1000) / 10 : 0,
    serverMsPerRequest: msPerRequest(servers),
    postgresMsPerRequest: msPerRequest(postgres),
    redisMsPerRequest: msPerRequest(redis),
    restMsPerRequest: msPerRequest(rest),
  };
}

interface Target {
  url: string;
  headers?: Record<string, string>;
  createTasks?: LoadScenario['createTasks'];
}

/** One generator process per target, `connections` split between them (their sum is `connections`), each waiting for its go-ahead. */
function startGenerators(targets: Target[], connections: number, settings: ScaleOutSettings, name: string): SteppedLoadGenerator[] {
  const shares = targets.map((_, index) => Math.floor(connections / targets.length) + (index < connections % targets.length ? 1 : 0));
  return targets.map((target, index) =>
    startSteppedLoadGenerator(
      { url: target.url, headers: target.headers, createTasks: target.createTasks, connections: shares[index]!, seconds: settings.duration, warmupSeconds: settings.warmup },
      name,
    ),
  );
}

/**
 * Loads with the generators at once: they warm up together and start their measured runs together.
 * Throughput is every request over the span from the first measured window's start to the last
 * one's end, so windows that drift apart lower it rather than flatter it.
 */
async function loadTogether(generators: SteppedLoadGenerator[], watched: WatchedProcesses): Promise<SetupMeasured> {
  const results = Promise.all(generators.map((generator) => generator.result));
  // Raced against the results: a generator that fails before it signals fails the run with its own error output.
  const allSignalled = async (signals: Promise<void>[]) => {
    await Promise.race([Promise.all(signals), results]);
  };
  await allSignalled(generators.map((generator) => generator.ready));
  for (const generator of generators) generator.go();
  await allSignalled(generators.map((generator) => generator.warmedUp));
  const before = sampleCpu(watched);
  const logFrom = logSize(watched.postgresLog);
  for (const generator of generators) generator.go();
  const measured = await results;
  const after = sampleCpu(watched);
  const refused = watched.postgresLog ? refusalsLogged(watched.postgresLog, logFrom) : undefined;
  const requests = measured.reduce((sum, result) => sum + result.requestsPerSecond * ((result.endedAt - result.startedAt) / 1000), 0);
  const spanMs = Math.max(...measured.map((result) => result.endedAt)) - Math.min(...measured.map((result) => result.startedAt));
  return {
    requestsPerSecond: generators.length === 1 ? measured[0]!.requestsPerSecond : Math.round(requests / (spanMs / 1000)),
    p50Ms: measured.map((result) => result.p50Ms),
    p99Ms: measured.map((result) => result.p99Ms),
    non2xx: measured.reduce((sum, result) => sum + result.non2xx, 0),
    ...(measured.some((result) => result.statuses)
      ? {
          statuses: measured.reduce<Record<string, number>>((sum, result) => {
            for (const [status, count] of Object.entries(result.statuses ?? {})) sum[status] = (sum[status] ?? 0) + count;
            return sum;
          }, {}),
        }
      : {}),
    errors: measured.reduce((sum, result) => sum + result.errors, 0),
    cpu: cpuUse(before, after, requests),
    ...(refused ? { refused } : {}),
    ...(generators.length > 1
      ? {
          windowSkewMs: Math.max(
            Math.max(...measured.map((result) => result.startedAt)) - Math.min(...measured.map((result) => result.startedAt)),
            Math.max(...measured.map((result) => result.endedAt)) - Math.min(...measured.map((result) => result.endedAt)),
          ),
          perInstance: measured,
        }
      : {}),
  };
}

/**
 * The statements PostgreSQL runs (BEGIN and COMMIT included) and the commands Redis runs for one
 * request, averaged over a few sent one at a time: with log_statement = 'all' for that moment only.
 */
async function roundTripsPerRequest(databaseUrl: string, logFile: string, redisPort: number, send: () => Promise<void>): Promise<{ postgres: number; redis: number }> {
  const requests = 4;
  const postgres = new pg.Client({ connectionString: databaseUrl });
  const redis = new Redis({ port: redisPort, host: '127.0.0.1', lazyConnect: true });
  await postgres.connect();
  await redis.connect();
  const setLogging = async (value: 'all' | 'none') => {
    await postgres.query(`ALTER SYSTEM SET log_statement = '${value}'`);
    await postgres.query('SELECT pg_reload_conf()');
    // Every backend reads the new setting at its next command, once the postmaster passed the reload on.
    await new Promise((resolve) => setTimeout(resolve, 300));
  };
  const commandsProcessed = async () => Number(/total_commands_processed:(\d+)/.exec(await redis.info('stats'))?.[1]);
  try {
    await setLogging('all');
    const logFrom = logSize(logFile);
    const commandsBefore = await commandsProcessed();
    for (let request = 0; request < requests; request += 1) await send();
    // The INFO command itself is counted too.
    const commands = (await commandsProcessed()) - commandsBefore - 1;
    const statements = readFileSync(logFile)
      .subarray(logFrom)
      .toString('utf8')
      .split('\n')
      .filter((line) => /\bLOG:\s+(statement|execute)\b/.test(line)).length;
    return { postgres: round(statements / requests), redis: round(commands / requests) };
  } finally {
    await setLogging('none').catch(() => undefined);
    await postgres.end();
    redis.disconnect();
  }
}

/** One request of the scenario, which must answer `status`: a broken setup fails the bench, never measures error pages. */
async function checkAnswers(target: Target, status: number, server: string): Promise<void> {
  const response = target.createTasks
    ? await fetch(target.url, {
        method: 'POST',
        headers: { authorization: `Bearer ${target.createTasks.token}`, 'content-type': 'application/json', 'idempotency-key': `bench-check-${Date.now()}-${Math.random()}` },
        body: JSON.stringify({ projectId: target.createTasks.projectId, title: 'Bench check' }),
      })
    : await fetch(target.url, { headers: target.headers });
  if (response.status !== status) throw new Error(`${server}: ${target.createTasks ? 'POST' : 'GET'} ${target.url} answered ${response.status}, not ${status}: ${(await response.text()).slice(0, 300)}`);
}

/** PostgreSQL's postmaster, from its pid file: what an emergency stop signals when the bench cannot wait for pg_ctl. */
function postmasterPid(folder: string): number | undefined {
  const file = path.join(folder, 'data', 'postmaster.pid');
  return existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) || undefined : undefined;
}

export async function measureScaleOut(settings: ScaleOutSettings, report: (line: string) => void): Promise<ScaleOutFigures> {
  const unavailable = scaleOutUnavailable();
  if (unavailable) return { skipped: unavailable };
  const phaseStarted = performance.now();
  const progress = (line: string) => report(`scale-out (${((performance.now() - phaseStarted) / 1000).toFixed(1)} s): ${line}`);
  const loadAverageBefore = os.loadavg().map((value) => Math.round(value * 100) / 100);
  const folder = path.join(settings.dataDir, 'scale-out');
  const postgresFolder = path.join(folder, 'postgres');
  const redisFolder = path.join(folder, 'redis');
  mkdirSync(postgresFolder, { recursive: true });
  mkdirSync(redisFolder, { recursive: true });
  if (process.getuid?.() === 0) {
    // PostgreSQL runs as `postgres`, which must pass through the bench's private folder to its own.
    chmodSync(settings.dataDir, 0o711);
    chmodSync(folder, 0o711);
  }
  giveToPostgresUser(postgresFolder);

  const servers: ApiServerProcess[] = [];
  let redis: ChildProcess | undefined;
  // Kept once PostgreSQL runs: the bench's signal handler removes the folder (and its pid file) before it exits.
  let postmaster: number | undefined;
  // process.exit() (the bench's signal handlers) skips every finally: PostgreSQL is no child of ours, so it is signalled here.
  const stopEnginesAtExit = () => {
    redis?.kill('SIGKILL');
    try {
      const pid = postmaster ?? postmasterPid(postgresFolder);
      if (pid) process.kill(pid, 'SIGQUIT');
    } catch {
      // Already gone.
    }
  };
  process.on('exit', stopEnginesAtExit);
  try {
    progress(`starting PostgreSQL and redis-server, seeding ${settings.taskRows.toLocaleString('en')} tasks into SQLite and PostgreSQL...`);
    const sqlitePath = path.join(folder, 'sqlite.db');
    const seedSqlite = async () => {
      const started = performance.now();
      const db = openDatabase(sqlitePath);
      try {
        const data = await seedScaleOutData(db, settings.taskRows);
        db.pragma('optimize');
        return { data, seconds: (performance.now() - started) / 1000 };
      } finally {
        db.close();
      }
    };
    const [postgresPort, redisPort] = [await freePort(), await freePort()];
    // Settled together, so that whatever started is stopped below even when another failed.
    const [seeded, postgresStarted, redisStarted] = await Promise.allSettled([
      seedSqlite(),
      // PostgreSQL's defaults (durable): every commit waits for its WAL to reach the disk.
      startLocalPostgres({ folder: postgresFolder, port: postgresPort, durable: true }),
      startLocalRedis({ port: redisPort, dir: redisFolder }),
    ]);
    if (redisStarted.status === 'fulfilled') redis = redisStarted.value;
    if (postgresStarted.status === 'fulfilled') postmaster = postmasterPid(postgresFolder);
    for (const result of [seeded, postgresStarted, redisStarted]) if (result.status === 'rejected') throw result.reason;
    const sqlite = (seeded as PromiseFulfilledResult<Awaited<ReturnType<typeof seedSqlite>>>).value;
    const serverUrl = (postgresStarted as PromiseFulfilledResult<string>).value;
    const databaseUrl = await createDatabase(serverUrl);
    progress(`SQLite seeded in ${sqlite.seconds.toFixed(1)} s; migrating and seeding PostgreSQL...`);

    // What `npm run admin -- migrate` runs: opening the database applies its migrations.
    let started = performance.now();
    const store = await openStore({ postgres: { url: databaseUrl, poolMax: 4, connectTimeoutMs: 5_000, statementTimeoutMs: 0 }, databasePath: '' });
    const postgresMigrateSeconds = (performance.now() - started) / 1000;
    started = performance.now();
    let postgresData: BenchData;
    try {
      postgresData = await seedScaleOutData(store.engine, settings.taskRows);
    } finally {
      await store.close();
    }
    const postgresSeedSeconds = (performance.now() - started) / 1000;
    const analyze = new pg.Client({ connectionString: databaseUrl });
    await analyze.connect();
    await analyze.query('ANALYZE').finally(() => analyze.end());

    const secrets = Object.fromEntries(sharedSecretNames.map((name) => [name, name === 'OAUTH_SIGNING_JWK' ? generateSigningJwk() : generateSecret()]));
    const postgresEnvironment = { ...secrets, DATABASE_URL: databaseUrl, REDIS_URL: `redis://127.0.0.1:${redisPort}` };
    // The same database through sessions whose commits do not wait for the WAL flush: SQLite's durability (see atSqliteDurability).
    const relaxedUrl = new URL(databaseUrl);
    relaxedUrl.searchParams.set('options', '-c synchronous_commit=off');
    progress('starting one server on SQLite and three on PostgreSQL + Redis (the third at SQLite\'s durability)...');
    const starting = [
      startApiServer({ environment: { DATABASE_PATH: sqlitePath }, name: 'the SQLite server' }),
      startApiServer({ environment: postgresEnvironment, name: 'PostgreSQL server 1' }),
      startApiServer({ environment: postgresEnvironment, name: 'PostgreSQL server 2' }),
      startApiServer({ environment: { ...postgresEnvironment, DATABASE_URL: relaxedUrl.toString() }, name: "PostgreSQL server at SQLite's durability" }),
    ];
    // Each started server is kept for the finally below, even when another fails to start.
    const settled = await Promise.allSettled(starting);
    for (const result of settled) if (result.status === 'fulfilled') servers.push(result.value);
    for (const result of settled) if (result.status === 'rejected') throw result.reason;
    const [sqliteServer, firstServer, secondServer, relaxedServer] = servers as [ApiServerProcess, ApiServerProcess, ApiServerProcess, ApiServerProcess];
    const relaxed = new pg.Client({ connectionString: relaxedUrl.toString() });
    await relaxed.connect();
    const setting = await relaxed.query<{ synchronous_commit: string }>('SHOW synchronous_commit').finally(() => relaxed.end());
    if (setting.rows[0]?.synchronous_commit !== 'off') throw new Error(`the session options of ${relaxedUrl.pathname} did not apply: synchronous_commit is ${setting.rows[0]?.synchronous_commit}`);

    const scenarios = [
      {
        name: 'GET /api/v1/portfolio',
        status: 200,
        target: (server: ApiServerProcess, data: BenchData): Target => ({ url: `${server.url}/api/v1/portfolio`, headers: { authorization: `Bearer ${data.portfolioKey}` } }),
      },
      {
        name: `GET /v1/tasks?limit=50 (${settings.taskRows.toLocaleString('en')} rows)`,
        status: 200,
        target: (server: ApiServerProcess, data: BenchData): Target => ({ url: `${server.url}/v1/tasks?limit=50`, headers: { authorization: `Bearer ${data.workspaces[0]!.token}` } }),
      },
      {
        name: 'POST /v1/tasks (new Idempotency-Key each)',
        status: 201,
        writes: true,
        target: (server: ApiServerProcess, data: BenchData): Target => ({
          url: `${server.url}/v1/tasks`,
          createTasks: { token: data.workspaces[0]!.token, projectId: data.workspaces[0]!.projectId },
        }),
      },
    ];
    for (const scenario of scenarios) {
      await checkAnswers(scenario.target(sqliteServer, sqlite.data), scenario.status, 'the SQLite server');
      for (const server of [firstServer, secondServer]) await checkAnswers(scenario.target(server, postgresData), scenario.status, 'a PostgreSQL server');
    }

    const postgresLog = path.join(postgresFolder, 'server.log');
    const roundTrips = [];
    for (const scenario of scenarios) {
      roundTrips.push(await roundTripsPerRequest(databaseUrl, postgresLog, redisPort, () => checkAnswers(scenario.target(firstServer, postgresData), scenario.status, 'a PostgreSQL server')));
    }
    const figures: ScaleOutScenarioFigures[] = [];
    let generator: LoadResult['generator'] = 'wrk';
    for (const [index, scenario] of scenarios.entries()) {
      progress(`${scenario.name} on SQLite, on PostgreSQL + Redis, on two instances...`);
      const watched = { servers: [firstServer.child.pid!], postmaster, redis: redis!.pid, postgresLog };
      // Every generator of the scenario starts now and waits for its turn.
      const setups = [
        startGenerators([scenario.target(sqliteServer, sqlite.data)], settings.connections, settings, scenario.name),
        startGenerators([scenario.target(firstServer, postgresData)], settings.connections, settings, scenario.name),
        startGenerators([scenario.target(firstServer, postgresData), scenario.target(secondServer, postgresData)], settings.connections, settings, scenario.name),
      ] as const;
      let onSqlite: SetupMeasured, onPostgres: SetupMeasured, onTwo: SetupMeasured;
      try {
        // No run starts while another generator is still starting (tsx takes a core for a moment).
        await Promise.all(setups.flat().map((generator) => generator.ready));
        onSqlite = await loadTogether(setups[0], { servers: [sqliteServer.child.pid!], postmaster: undefined, redis: undefined });
        onPostgres = await loadTogether(setups[1], watched);
        onTwo = await loadTogether(setups[2], { ...watched, servers: [firstServer.child.pid!, secondServer.child.pid!] });
      } finally {
        for (const generator of setups.flat()) generator.stop();
      }
      generator = onTwo.perInstance?.[0]?.generator ?? generator;
      // One pair of runs moves by ±0.2 on shared cores: (a) and (b) again, round after round, in the
      // opposite order every other round. A write scenario also runs (b') on the server whose commits
      // have SQLite's durability (synchronous_commit=off), from the first round on.
      const sqliteRun = { server: sqliteServer, data: sqlite.data, watched: { servers: [sqliteServer.child.pid!], postmaster: undefined, redis: undefined } };
      const postgresRun = { server: firstServer, data: postgresData, watched };
      const relaxedRun = { server: relaxedServer, data: postgresData, watched: { ...watched, servers: [relaxedServer.child.pid!] } };
      const rounds = [ratio(onPostgres.requestsPerSecond, onSqlite.requestsPerSecond)];
      const relaxedRounds: number[] = [];
      for (let round = 0; round < settings.rounds; round += 1) {
        const runs = round === 0 ? (scenario.writes ? [relaxedRun] : []) : [sqliteRun, postgresRun, ...(scenario.writes ? [relaxedRun] : [])];
        if (runs.length === 0) continue;
        progress(`${scenario.name}: one instance on each engine again, round ${round + 1} of ${settings.rounds}...`);
        const setups = runs.map((run) => startGenerators([scenario.target(run.server, run.data)], settings.connections, settings, scenario.name));
        try {
          await Promise.all(setups.flat().map((generator) => generator.ready));
          const rates = new Map<object, number>(round === 0 ? [[sqliteRun, onSqlite.requestsPerSecond]] : []);
          const order = runs.map((_, index) => index);
          for (const index of round % 2 === 1 ? order.reverse() : order) rates.set(runs[index]!, (await loadTogether(setups[index]!, runs[index]!.watched)).requestsPerSecond);
          if (round > 0) rounds.push(ratio(rates.get(postgresRun)!, rates.get(sqliteRun)!));
          if (scenario.writes) relaxedRounds.push(ratio(rates.get(relaxedRun)!, rates.get(sqliteRun)!));
        } finally {
          for (const generator of setups.flat()) generator.stop();
        }
      }
      figures.push({
        name: scenario.name,
        postgresStatementsPerRequest: roundTrips[index]!.postgres,
        redisCommandsPerRequest: roundTrips[index]!.redis,
        sqlite: onSqlite,
        postgres: onPostgres,
        twoInstances: onTwo,
        postgresOverSqlite: round(median(rounds)),
        postgresOverSqliteRounds: rounds,
        ...(scenario.writes ? { atSqliteDurability: { overSqlite: round(median(relaxedRounds)), rounds: relaxedRounds } } : {}),
        twoOverOne: ratio(onTwo.requestsPerSecond, onPostgres.requestsPerSecond),
      });
    }
    return {
      cores: os.cpus().length,
      loadAverageBefore,
      loadAverageAfter: os.loadavg().map((value) => Math.round(value * 100) / 100),
      taskRows: settings.taskRows,
      seeding: { sqliteSeconds: round(sqlite.seconds), postgresMigrateSeconds: round(postgresMigrateSeconds), postgresSeedSeconds: round(postgresSeedSeconds) },
      connections: settings.connections,
      duration: settings.duration,
      warmup: settings.warmup,
      generator,
      scenarios: figures,
    };
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    if (redis) {
      redis.kill('SIGTERM');
      await exited(redis);
    }
    await stopLocalPostgres(postgresFolder, 'immediate');
    process.off('exit', stopEnginesAtExit);
  }
}

const round = (value: number) => Math.round(value * 100) / 100;
const spreadOf = (value: number, rounds: number[]) => `${value.toFixed(2)} (${Math.min(...rounds).toFixed(2)}–${Math.max(...rounds).toFixed(2)})`;
const ratio = (value: number, reference: number) => (reference > 0 ? round(value / reference) : 0);

/** The phase's figures as markdown lines. */
export function scaleOutReport(figures: ScaleOutFigures): string[] {
  if ('skipped' in figures) return ['', `Scale-out phase skipped: ${figures.skipped}`, ''];
  const milliseconds = (values: number[]) => values.map((value) => value.toFixed(2)).join(' / ');
  const refusals = (measured: SetupMeasured) => {
    if (!measured.refused) return '';
    const { serializationFailures, deadlocks, otherErrors } = measured.refused;
    return [`${serializationFailures}`, deadlocks ? `${deadlocks} deadlocks` : '', otherErrors ? `${otherErrors} other errors` : ''].filter(Boolean).join(', ');
  };
  const failedAnswers = (measured: SetupMeasured) => {
    const statuses = Object.entries(measured.statuses ?? {}).map(([status, count]) => `${count} × ${status}`);
    const errors = measured.errors ? [`${measured.errors} socket errors`] : [];
    return [`${measured.non2xx + measured.errors}`, ...(statuses.length + errors.length > 0 ? [`(${[...statuses, ...errors].join(', ')})`] : [])].join(' ');
  };
  const row = (name: string, setup: string, measured: SetupMeasured) =>
    `| ${name} | ${setup} | ${measured.requestsPerSecond} | ${milliseconds(measured.p50Ms)} | ${milliseconds(measured.p99Ms)} | ${failedAnswers(measured)} | ${refusals(measured)} | ${measured.cpu.machineBusyPercent} | ${measured.cpu.serverMsPerRequest} | ${measured.cpu.postgresMsPerRequest} | ${measured.cpu.redisMsPerRequest} | ${measured.cpu.restMsPerRequest} |`;
  const [first, second] = [Math.ceil(figures.connections / 2), Math.floor(figures.connections / 2)];
  return [
    '',
    `Scale-out on ${figures.cores} cores (load average ${figures.loadAverageBefore.join(', ')} before the phase, ${figures.loadAverageAfter.join(', ')} after): ` +
      `one server on SQLite (the reference of this run), one on PostgreSQL + Redis, two on that same PostgreSQL + Redis loaded at once by two ${figures.generator} processes ` +
      `(${first} + ${second} connections; the sum is the ${figures.connections} of the one-server runs). ${figures.duration} s per run after ${figures.warmup} s warm-up. ` +
      `PostgreSQL runs with its defaults (each commit waits for its WAL flush; SQLite runs WAL with synchronous=NORMAL, no flush per commit); ` +
      `a write scenario also runs on a third PostgreSQL instance whose sessions set synchronous_commit=off, SQLite's durability (the last commits may be lost in a crash of the machine, nothing is corrupted). ` +
      `Every process (servers, generators, PostgreSQL, Redis) shares these ${figures.cores} cores: two instances can only add what the cores left idle by one.`,
    `Seeded ${figures.taskRows.toLocaleString('en')} tasks and the demo portfolio into each: SQLite ${figures.seeding.sqliteSeconds} s; PostgreSQL migrate ${figures.seeding.postgresMigrateSeconds} s, seed ${figures.seeding.postgresSeedSeconds} s.`,
    '',
    '| Scenario | setup | req/s | p50 ms | p99 ms | non-2xx | serialization failures (retried) | CPU busy % | server CPU ms/req | PostgreSQL CPU ms/req | Redis CPU ms/req | rest of the machine CPU ms/req (generators, kernel, others) |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...figures.scenarios.flatMap((scenario) => [
      row(scenario.name, '1 × SQLite', scenario.sqlite),
      row(scenario.name, '1 × PostgreSQL + Redis', scenario.postgres),
      row(scenario.name, '2 × PostgreSQL + Redis (summed)', scenario.twoInstances),
    ]),
    '',
    '| Scenario | PostgreSQL + Redis ÷ SQLite (one instance; median, lowest–highest round) | two instances ÷ one (PostgreSQL + Redis) | windows of the two generators apart by | PostgreSQL statements / request | Redis commands / request |',
    '|---|---:|---:|---:|---:|---:|',
    ...figures.scenarios.map(
      (scenario) =>
        `| ${scenario.name} | ${spreadOf(scenario.postgresOverSqlite, scenario.postgresOverSqliteRounds)}${scenario.atSqliteDurability ? `; at SQLite's durability ${spreadOf(scenario.atSqliteDurability.overSqlite, scenario.atSqliteDurability.rounds)}` : ''} | ${scenario.twoOverOne.toFixed(2)} | ${scenario.twoInstances.windowSkewMs} ms | ${scenario.postgresStatementsPerRequest} | ${scenario.redisCommandsPerRequest} |`,
    ),
    '',
    ...figures.scenarios.flatMap((scenario) =>
      [scenario.postgres, scenario.twoInstances]
        .filter((measured) => measured.refused?.mostAt.length)
        .slice(0, 1)
        .map(
          ({ refused }) =>
            `${scenario.name}: ${refused!.serializationFailures} serialization failures in one run, most at: ` +
            refused!.mostAt.map((place) => `${place.statement} (${place.count}; ${place.reason || 'no reason logged'})`).join('; ') +
            '.',
        ),
    ),
    '',
  ];
}
