// npx tsx scripts/bench/singleInstanceAb.ts: the scale-out phase's three scenarios on one server on
// SQLite against one server on PostgreSQL + Redis (set up as scaleOutPhase.ts does: durable
// PostgreSQL, the same seed), loaded in alternating rounds (SQLite, PostgreSQL, PostgreSQL, SQLite,
// …) so that a machine whose load changes during the run weighs on both alike. Prints each round's
// PostgreSQL ÷ SQLite ratio and their median per scenario, and the median CPU milliseconds per
// request of each setup (server, plus PostgreSQL's backends and Redis), which a busy machine
// disturbs far less than the rates. AB_ROUNDS (default 4), AB_SECONDS (3),
// AB_CONNECTIONS (10), AB_TASKS (20000); AB_ONLY=TEXT runs the scenarios whose name holds it (portfolio, GET, POST);
// AB_CPU_PROFILE_DIR=DIR writes each server's CPU profile when it stops, into DIR/sqlite/ and DIR/postgres/.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { generateSecret, generateSigningJwk } from '../../src/auth/serverSecrets.js';
import { sharedSecretNames } from '../../src/config.js';
import { demoTenants } from '../../src/demo/demoData.js';
import { openStore } from '../../src/openStore.js';
import { importPortfolio } from '../../src/portfolio/import/importPortfolio.js';
import { openDatabase } from '../../src/store/database.js';
import { engineOf, type StoreSource } from '../../src/store/engine.js';
import { createTenantStore } from '../../src/store/tenants.js';
import { exited, freePort, giveToPostgresUser, startLocalPostgres, startLocalRedis, stopLocalPostgres } from '../localEngines.js';
import { startApiServer, type ApiServerProcess } from './apiServerProcess.js';
import type { LoadScenario } from './loadGenerator.js';
import { runLoadGenerator } from './loadGeneratorProcess.js';
import { clockTicksPerSecond, processAndChildrenTicks, processTicks } from './processFigures.js';
import { seedBenchData, type BenchData } from './seed.js';
import { median } from './median.js';
import { printHelpWhenAsked } from './helpWhenAsked.js';

printHelpWhenAsked(import.meta.filename);

const ROUNDS = Number(process.env.AB_ROUNDS ?? 4);
const SECONDS = Number(process.env.AB_SECONDS ?? 3);
const CONNECTIONS = Number(process.env.AB_CONNECTIONS ?? 10);
const TASKS = Number(process.env.AB_TASKS ?? 20_000);
const ONLY = process.env.AB_ONLY;
const CPU_PROFILE_DIR = process.env.AB_CPU_PROFILE_DIR ? path.resolve(process.env.AB_CPU_PROFILE_DIR) : undefined;

/** CPU ticks of the server, of PostgreSQL's processes (per pid: backends come and go) and of Redis. */
function cpuTicks(server: number, postmaster: number | undefined, redisPid: number): { server: number; postgres: Map<number, number>; redis: number } {
  const postgres = postmaster === undefined ? new Map<number, number>() : processAndChildrenTicks(postmaster);
  return { server: processTicks(server)?.ticks ?? 0, postgres, redis: processTicks(redisPid)?.ticks ?? 0 };
}

async function seed(source: StoreSource): Promise<BenchData> {
  const engine = engineOf(source);
  const tenant = demoTenants.main;
  await createTenantStore(engine).createTenant(tenant.name, { id: tenant.id });
  await importPortfolio(engine, tenant.id, tenant.document);
  return seedBenchData(engine, [TASKS], tenant.id);
}

const folder = mkdtempSync(path.join(os.tmpdir(), 'single-instance-ab-'));
chmodSync(folder, 0o711);
const postgresFolder = path.join(folder, 'postgres');
const redisFolder = path.join(folder, 'redis');
mkdirSync(postgresFolder);
mkdirSync(redisFolder);
giveToPostgresUser(postgresFolder);
const [postgresPort, redisPort] = [await freePort(), await freePort()];
const serverUrl = await startLocalPostgres({ folder: postgresFolder, port: postgresPort, durable: true });
const redis = await startLocalRedis({ port: redisPort, dir: redisFolder });
const servers: ApiServerProcess[] = [];
try {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query('CREATE DATABASE single_instance_ab');
  await admin.end();
  const databaseUrl = serverUrl.replace(/\/postgres$/, '/single_instance_ab');
  const store = await openStore({ postgres: { url: databaseUrl, poolMax: 4, connectTimeoutMs: 5_000, statementTimeoutMs: 0 }, databasePath: '' });
  const postgresData = await seed(store.engine);
  await store.close();
  const analyze = new pg.Client({ connectionString: databaseUrl });
  await analyze.connect();
  await analyze.query('ANALYZE').finally(() => analyze.end());
  const sqlitePath = path.join(folder, 'sqlite.db');
  const db = openDatabase(sqlitePath);
  const sqliteData = await seed(db);
  db.pragma('optimize');
  db.close();
  const secrets = Object.fromEntries(sharedSecretNames.map((name) => [name, name === 'OAUTH_SIGNING_JWK' ? generateSigningJwk() : generateSecret()]));
  // node --cpu-prof-dir makes the folder itself.
  const profileDir = (engine: string) => (CPU_PROFILE_DIR ? path.join(CPU_PROFILE_DIR, engine) : undefined);
  servers.push(await startApiServer({ environment: { DATABASE_PATH: sqlitePath }, name: 'the SQLite server', cpuProfileDir: profileDir('sqlite') }));
  servers.push(
    await startApiServer({
      environment: { ...secrets, DATABASE_URL: databaseUrl, REDIS_URL: `redis://127.0.0.1:${redisPort}` },
      name: 'the PostgreSQL server',
      cpuProfileDir: profileDir('postgres'),
    }),
  );
  const [sqliteServer, postgresServer] = servers as [ApiServerProcess, ApiServerProcess];
  const scenarios: [string, (server: ApiServerProcess, data: BenchData) => Omit<LoadScenario, 'connections' | 'seconds'>][] = [
    ['GET /api/v1/portfolio', (server, data) => ({ url: `${server.url}/api/v1/portfolio`, headers: { authorization: `Bearer ${data.portfolioKey}` } })],
    ['GET /v1/tasks?limit=50', (server, data) => ({ url: `${server.url}/v1/tasks?limit=50`, headers: { authorization: `Bearer ${data.workspaces[0]!.token}` } })],
    ['POST /v1/tasks', (server, data) => ({ url: `${server.url}/v1/tasks`, createTasks: { token: data.workspaces[0]!.token, projectId: data.workspaces[0]!.projectId } })],
  ];
  const postmaster = Number(readFileSync(path.join(postgresFolder, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  /** Req/s, and CPU ms per request of the whole setup (counted over the measured run and its 1 s warm-up). */
  const load = async (scenario: Omit<LoadScenario, 'connections' | 'seconds'>, server: ApiServerProcess, onPostgres: boolean) => {
    const before = cpuTicks(server.child.pid!, onPostgres ? postmaster : undefined, redis.pid!);
    const result = await runLoadGenerator({ ...scenario, connections: CONNECTIONS, seconds: SECONDS, warmupSeconds: 1 }, 'a/b');
    const after = cpuTicks(server.child.pid!, onPostgres ? postmaster : undefined, redis.pid!);
    if (result.non2xx + result.errors > 0) throw new Error(`${scenario.url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
    let ticks = after.server - before.server + (onPostgres ? after.redis - before.redis : 0);
    for (const [pid, value] of after.postgres) ticks += value - (before.postgres.get(pid) ?? 0);
    const requests = result.requestsPerSecond * (SECONDS + 1);
    return { rate: result.requestsPerSecond, cpuMs: (ticks * 1000) / clockTicksPerSecond() / requests };
  };
  console.log(`load average ${os.loadavg().map((value) => value.toFixed(1)).join(', ')}; ${ROUNDS} rounds of ${SECONDS} s, ${CONNECTIONS} connections`);
  const chosen = ONLY === undefined ? scenarios : scenarios.filter(([name]) => name.includes(ONLY));
  if (chosen.length === 0) throw new Error(`AB_ONLY=${ONLY} names none of: ${scenarios.map(([name]) => name).join(', ')}`);
  for (const [name, target] of chosen) {
    const ratios: number[] = [];
    const figures: string[] = [];
    const cpu: Record<string, number[]> = { sqlite: [], postgres: [] };
    for (let round = 0; round < ROUNDS; round += 1) {
      const order = round % 2 === 0 ? ['sqlite', 'postgres'] : ['postgres', 'sqlite'];
      const rates: Record<string, number> = {};
      for (const which of order) {
        const measured =
          which === 'sqlite' ? await load(target(sqliteServer, sqliteData), sqliteServer, false) : await load(target(postgresServer, postgresData), postgresServer, true);
        rates[which] = measured.rate;
        cpu[which]!.push(measured.cpuMs);
      }
      ratios.push(rates.postgres! / rates.sqlite!);
      figures.push(`${Math.round(rates.sqlite!)}/${Math.round(rates.postgres!)}`);
    }
    console.log(
      `${name}: median PostgreSQL ÷ SQLite ${median(ratios).toFixed(2)} (rounds, SQLite/PostgreSQL req/s: ${figures.join(', ')}); ` +
        `CPU ms/request SQLite ${median(cpu.sqlite!).toFixed(3)}, PostgreSQL + Redis ${median(cpu.postgres!).toFixed(3)}, ratio ${(median(cpu.sqlite!) / median(cpu.postgres!)).toFixed(2)}`,
    );
  }
  console.log(`load average ${os.loadavg().map((value) => value.toFixed(1)).join(', ')}`);
} finally {
  await Promise.all(servers.map((server) => server.stop()));
  redis.kill('SIGTERM');
  await exited(redis);
  await stopLocalPostgres(postgresFolder, 'immediate');
  rmSync(folder, { recursive: true, force: true });
}
