// Lists the PostgreSQL statements and Redis commands one request of each scale-out scenario makes
// on one server on PostgreSQL + Redis (after a few warm-up requests): what the scale-out phase only
// counts. `npx tsx scripts/bench/roundTripProfile.ts`.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { generateSecret, generateSigningJwk } from '../../src/auth/serverSecrets.js';
import { sharedSecretNames } from '../../src/config.js';
import { demoTenants } from '../../src/demo/demoData.js';
import { openStore } from '../../src/openStore.js';
import { importPortfolio } from '../../src/portfolio/import/importPortfolio.js';
import { createTenantStore } from '../../src/store/tenants.js';
import { exited, freePort, giveToPostgresUser, startLocalPostgres, startLocalRedis, stopLocalPostgres } from '../localEngines.js';
import { startApiServer } from './apiServerProcess.js';
import { seedBenchData } from './seed.js';
import { printHelpWhenAsked } from './helpWhenAsked.js';

printHelpWhenAsked(import.meta.filename);

const folder = mkdtempSync(path.join(os.tmpdir(), 'round-trips-'));
const postgresFolder = path.join(folder, 'postgres');
const redisFolder = path.join(folder, 'redis');
mkdirSync(postgresFolder, { recursive: true });
mkdirSync(redisFolder, { recursive: true });
chmodSync(folder, 0o711);
giveToPostgresUser(postgresFolder);
const [postgresPort, redisPort] = [await freePort(), await freePort()];
const serverUrl = await startLocalPostgres({ folder: postgresFolder, port: postgresPort, durable: false });
const redisChild = await startLocalRedis({ port: redisPort, dir: redisFolder });
let server: Awaited<ReturnType<typeof startApiServer>> | undefined;
try {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query('CREATE DATABASE round_trips');
  await admin.end();
  const databaseUrl = serverUrl.replace(/\/postgres$/, '/round_trips');
  const store = await openStore({ postgres: { url: databaseUrl, poolMax: 4, connectTimeoutMs: 5_000, statementTimeoutMs: 0 }, databasePath: '' });
  const tenant = demoTenants.main;
  await createTenantStore(store.engine).createTenant(tenant.name, { id: tenant.id });
  await importPortfolio(store.engine, tenant.id, tenant.document);
  const data = await seedBenchData(store.engine, [2000], tenant.id);
  await store.close();
  const secrets = Object.fromEntries(sharedSecretNames.map((name) => [name, name === 'OAUTH_SIGNING_JWK' ? generateSigningJwk() : generateSecret()]));
  server = await startApiServer({ environment: { ...secrets, DATABASE_URL: databaseUrl, REDIS_URL: `redis://127.0.0.1:${redisPort}` }, name: 'the server' });
  const url = server.url;
  const workspace = data.workspaces[0]!;
  const scenarios: [string, () => Promise<Response>][] = [
    ['GET /api/v1/portfolio', () => fetch(`${url}/api/v1/portfolio`, { headers: { authorization: `Bearer ${data.portfolioKey}` } })],
    ['GET /v1/tasks?limit=50', () => fetch(`${url}/v1/tasks?limit=50`, { headers: { authorization: `Bearer ${workspace.token}` } })],
    [
      'POST /v1/tasks',
      () =>
        fetch(`${url}/v1/tasks`, {
          method: 'POST',
          headers: { authorization: `Bearer ${workspace.token}`, 'content-type': 'application/json', 'idempotency-key': `profile-${Math.random()}` },
          body: JSON.stringify({ projectId: workspace.projectId, title: 'Profile' }),
        }),
    ],
  ];
  const postgres = new pg.Client({ connectionString: databaseUrl });
  await postgres.connect();
  const monitor = new Redis({ port: redisPort, host: '127.0.0.1' });
  const commands: string[] = [];
  const monitoring = await monitor.monitor();
  monitoring.on('monitor', (_time: string, args: string[]) => commands.push(args.map((arg) => arg.slice(0, 60)).join(' ')));
  await postgres.query(`ALTER SYSTEM SET log_statement = 'all'`);
  await postgres.query('SELECT pg_reload_conf()');
  await new Promise((resolve) => setTimeout(resolve, 300));
  const log = path.join(postgresFolder, 'server.log');
  const requests = Number(process.env.REQUESTS ?? 4);
  for (const [name, send] of scenarios) {
    for (let warm = 0; warm < 3; warm += 1) await (await send()).arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const from = statSync(log).size;
    commands.length = 0;
    for (let request = 0; request < requests; request += 1) {
      const response = await send();
      await response.arrayBuffer();
      if (response.status >= 300) throw new Error(`${name}: ${response.status}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    const statements = readFileSync(log).subarray(from).toString('utf8').split('\n').filter((line) => /\bLOG:\s+(statement|execute)\b/.test(line));
    console.log(`\n## ${name}: ${statements.length / requests} PostgreSQL statements, ${commands.length / requests} Redis commands per request`);
    for (const line of statements.slice(0, Math.ceil(statements.length / requests))) console.log('  pg:', line.replace(/^.*?LOG:\s+/, '').slice(0, 200));
    for (const command of commands.slice(0, Math.ceil(commands.length / requests))) console.log('  redis:', command);
  }
  monitoring.disconnect();
  monitor.disconnect();
  await postgres.end();
} finally {
  await server?.stop();
  redisChild.kill('SIGTERM');
  await exited(redisChild);
  await stopLocalPostgres(postgresFolder, 'immediate');
  rmSync(folder, { recursive: true, force: true });
}
