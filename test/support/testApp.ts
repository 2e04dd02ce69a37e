import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { startApp, type AppDependencies, type RunningApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createJsonLogger, type Logger } from '../../src/logger.js';
import { loadDemoData, type DemoFixture } from '../../src/demo/demoData.js';
import { openDatabase } from '../../src/store/database.js';
import { postgresEngine, postgresStatementText, sqliteEngine, type StoreEngine } from '../../src/store/engine.js';
import { openPostgres } from '../../src/store/postgres.js';
import { keyFilePath, loadKeyRing } from '../../src/auth/keyRings.js';
import { loadSealingBox } from '../../src/auth/secretBox.js';
import { afterAll, beforeAll, inject } from 'vitest';
import { ContractClient } from './contractClient.js';
import { fakeDnsResolver } from './fakeDns.js';
import type { DnsResolver } from '../../src/webhooks/hostResolver.js';
import { sharedPostgresServer } from './postgresServer.js';
import { redisLimitsEnv, sharedRedisUrl } from './redisServer.js';
import { liftCallLimits } from './workPlatform.js';

export type TestEngineKind = 'sqlite' | 'postgres';

/**
 * The engines the API suites run on: a SQLite file (the default), or with TEST_ENGINE=postgres
 * (vitest.config.ts's `api-postgres` project) a PostgreSQL database of their own on the run's one
 * real server, with the limits counted in the run's one real redis-server under a key prefix of
 * their own, as a scaled-out deployment runs.
 */
export function testEngineKind(): TestEngineKind {
  // Read at each start: a worker that runs files of both projects keeps this module between them.
  return process.env.TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite';
}

/** SQL the tests read or set up data with, run on the app's engine (`?` parameters on both). */
export interface TestSql {
  rows<Row = Record<string, unknown>>(text: string, ...params: unknown[]): Promise<Row[]>;
  row<Row = Record<string, unknown>>(text: string, ...params: unknown[]): Promise<Row | undefined>;
  /** The first column of the first row. */
  value<Value = unknown>(text: string, ...params: unknown[]): Promise<Value>;
  run(text: string, ...params: unknown[]): Promise<void>;
  /**
   * Everything the engine holds for the app, to search for what must never be stored: SQLite's
   * database file and its write-ahead log as they are on disk; PostgreSQL's every row of every
   * table as text (its files may hold TOAST-compressed values a byte search would miss).
   */
  storedBytes(): Promise<Buffer>;
  /**
   * Makes every insert into `table` whose new row matches `when` (an SQL condition on NEW, the
   * same in both dialects) fail with `message`, as a full disk or a broken constraint would;
   * answers the function that removes the failure again.
   */
  failInserts(table: string, when: string, message: string): Promise<() => Promise<void>>;
}

export type WorkPlatformFixture = DemoFixture['workPlatform'];

/** What the Work-Platform (/v1) suites use of a test app: the app, its /v1 client and the /v1 demo data. */
export interface WorkPlatformTestApp {
  t: TestApp;
  /** The contract-validating client of /v1. */
  client: ContractClient;
  fx: WorkPlatformFixture;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  now?: () => number;
  config?: Partial<Config>;
  /** The resolver of webhook host names; by default one where no name but localhost exists, so that no test asks a real DNS server. */
  dns?: DnsResolver;
  analyticsWorkerUrl?: URL;
  /**
   * Raises the /v1 call limits of both demo workspaces out of reach, for suites that make more calls
   * than a free plan allows and do not test the limits themselves.
   */
  liftCallLimits?: boolean;
  /** Wraps the caller resolver (tests that count credential look-ups). */
  wrapCallers?: AppDependencies['wrapCallers'];
  /** Wraps the idempotency key store (tests that count key look-ups). */
  wrapIdempotencyKeys?: AppDependencies['wrapIdempotencyKeys'];
}

export interface TestApp {
  app: RunningApp;
  client: ContractClient;
  /** A client of the Work-Platform API (/v1) that validates every answer against its contract. */
  workPlatformClient: ContractClient;
  fixture: DemoFixture;
  /** The app as the /v1 suites use it: `{ t, client, fx }`. */
  workPlatform: WorkPlatformTestApp;
  /** The key the server signs and verifies session tokens with (SESSION_JWT_SECRET or the key file). */
  sessionSecret: Uint8Array;
  /** The engine the app serves from. */
  store: StoreEngine;
  engineKind: TestEngineKind;
  sql: TestSql;
  /** Another instance's way to the same data (the caller closes it). */
  openAnother(): Promise<OtherInstance>;
  /** The SQLite connection under the app (only with the SQLite engine: a test that reads it is a SQLite test). */
  db: BetterSqlite3.Database;
  dataDir: string;
  /** Every log line the server wrote, to assert what is and is not logged. */
  logLines: string[];
  close(): Promise<void>;
}

/** The production JSON logger, writing its lines into memory. */
export function memoryLogger(lines: string[]): Logger {
  const keep = (line: string) => {
    lines.push(line.trimEnd());
  };
  return createJsonLogger({ out: keep, err: keep });
}

/**
 * The one way the tests start the server in this process: the real app on port 0 over a real
 * SQLite file in a temp directory (or PostgreSQL, see testEngineKind), loaded with the demo data,
 * with response validation enforced; its clients validate every response again. Tests of what only
 * a process has (its start-up, signals, restarts, several processes) use startServerProcess.
 */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'contract-api-test-'));
  const databasePath = path.join(dataDir, 'app.db');
  const engineKind = testEngineKind();
  const seed = options.now ? undefined : await demoSeed(engineKind, options);
  // The seed's folder holds its database file (SQLite) and the key files its demo tokens were signed and sealed with.
  if (seed) cpSync(seed.dataDir, dataDir, { recursive: true });
  const opened = engineKind === 'postgres' ? await openPostgresForTest(seed?.postgresTemplate) : openSqliteForTest(databasePath);
  try {
    const fixture = seed ? structuredClone(seed.fixture) : undefined;
    return await startOnEngine(opened, dataDir, databasePath, engineKind, options, fixture);
  } catch (error) {
    // Nothing of a start that failed outlives it: the suite's afterAll has no app to close.
    await opened.close();
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
}

/** The configuration of a test app over the database at `databasePath` (the data folder beside it) or `engineEnv`'s. */
function testConfig(databasePath: string, engineEnv: Record<string, string>, options: TestAppOptions): Config {
  return {
    ...loadConfig({
      DATABASE_PATH: databasePath,
      ...engineEnv,
      PORT: '0',
      HOST: '127.0.0.1',
      RESPONSE_VALIDATION: 'enforce',
      // Suites make hundreds of calls with one key; the rate-limit suite sets its own allowance.
      PORTFOLIO_RATE_LIMIT: '1000000',
      // The OAuth suites run many authorizations from 127.0.0.1; test/oauth/oauthLimits.test.ts sets its own limits.
      OAUTH_PAGE_RATE_LIMIT: '1000000',
      OAUTH_TOKEN_RATE_LIMIT: '1000000',
      // The API suites do not deliver webhooks; the webhook suites turn the worker on or build one.
      WEBHOOK_WORKER: 'off',
      // Connector calls never leave the machine: nothing listens on port 9, so they fail at once (suites that use GitHub start a local one).
      GITHUB_API_BASE_URL: 'http://127.0.0.1:9',
      ...options.env,
    }),
    ...options.config,
  };
}

/**
 * A data folder and database loaded with the demo data, which each app of the process copies
 * instead of loading the demo again (on PostgreSQL that load is thousands of round trips, the
 * most of an app's start): SQLite's file is copied with the folder, PostgreSQL's database is the
 * template of the app's own. The fixture names what the copy holds; the demo's ids are seeded, its
 * tokens and keys are those of the seed. An app with an injected clock loads its own demo, dated
 * by that clock.
 */
interface DemoSeed {
  dataDir: string;
  fixture: DemoFixture;
  /** The name of the seeded PostgreSQL database, the template of each app's own. */
  postgresTemplate?: string;
  madeAt: number;
}

/**
 * Made again after a while: the demo is dated by the real clock (its timeline ends today, its
 * sessions last a day), and a worker process runs for many minutes.
 */
const DEMO_SEED_LIFETIME_MS = 5 * 60_000;
const demoSeeds = new Map<string, Promise<DemoSeed>>();

async function demoSeed(engineKind: TestEngineKind, options: TestAppOptions): Promise<DemoSeed> {
  // The secrets the demo is signed and sealed with may come from the app's configuration.
  const key = JSON.stringify([engineKind, options.env ?? {}, options.config ?? {}]);
  const current = demoSeeds.get(key);
  if (current) {
    const seed = await current.catch(() => undefined);
    if (seed && Date.now() - seed.madeAt < DEMO_SEED_LIFETIME_MS) return seed;
    if (demoSeeds.get(key) !== current) return demoSeed(engineKind, options);
  }
  const made = makeDemoSeed(engineKind, options);
  demoSeeds.set(key, made);
  return made;
}

async function makeDemoSeed(engineKind: TestEngineKind, options: TestAppOptions): Promise<DemoSeed> {
  // In the run's rendezvous folder, which the global teardown deletes (a worker process may end without its exit event).
  const dataDir = mkdtempSync(path.join(inject('postgresRendezvous'), 'demo-seed-'));
  const databasePath = path.join(dataDir, 'app.db');
  const madeAt = Date.now();
  const postgresUrl = engineKind === 'postgres' ? await (await sharedPostgresServer()).createDatabase({ migrated: true }) : undefined;
  const instance = postgresUrl ? await postgresInstance(postgresUrl) : sqliteInstance(databasePath);
  try {
    const config = testConfig(databasePath, postgresUrl ? { DATABASE_URL: postgresUrl } : {}, options);
    const sessionSecret = loadKeyRing(config.sessionJwtSecret, keyFilePath('session', config.dataDirectory), { name: 'SESSION_JWT_SECRET' }).newest().key;
    const fixture = await loadDemoData(instance.sqlite ?? instance.store, Date.now, { sessionSecret, webhookSecretBox: loadSealingBox(config) });
    return { dataDir, fixture, postgresTemplate: postgresUrl && new URL(postgresUrl).pathname.slice(1), madeAt };
  } finally {
    // Closed before it is copied: SQLite's log is checkpointed into the file, and PostgreSQL copies no database anyone is connected to.
    await instance.close();
  }
}

async function startOnEngine(
  opened: OpenedTestEngine,
  dataDir: string,
  databasePath: string,
  engineKind: TestEngineKind,
  options: TestAppOptions,
  seededFixture: DemoFixture | undefined,
): Promise<TestApp> {
  const config = testConfig(databasePath, opened.env, options);
  const now = options.now ?? Date.now;
  // The same secret the server will read, so the demo's session tokens (and the tests' own) verify.
  const sessionSecret = loadKeyRing(config.sessionJwtSecret, keyFilePath('session', config.dataDirectory), { name: 'SESSION_JWT_SECRET' }).newest().key;
  const fixture = seededFixture ?? (await loadDemoData(opened.sqlite ?? opened.store, now, { sessionSecret, webhookSecretBox: loadSealingBox(config) }));
  const logLines: string[] = [];
  const app = await startApp(config, {
    logger: memoryLogger(logLines),
    ...(opened.sqlite ? { db: opened.sqlite } : { store: { engine: opened.store, sqlite: undefined, location: 'test database', close: async () => {} } }),
    now,
    webhookResolver: options.dns ?? fakeDnsResolver(),
    analyticsWorkerUrl: options.analyticsWorkerUrl,
    wrapCallers: options.wrapCallers,
    wrapIdempotencyKeys: options.wrapIdempotencyKeys,
  });
  if (options.liftCallLimits) {
    await liftCallLimits(opened.store, fixture.workPlatform.workspaceId);
    await liftCallLimits(opened.store, fixture.workPlatform.otherWorkspace.workspaceId);
  }
  const client = new ContractClient(app.url);
  let workPlatformClient: ContractClient | undefined;
  const testApp: TestApp = {
    app,
    client,
    // Built on first use: the portfolio suites never pay for compiling the other contract.
    get workPlatformClient() {
      workPlatformClient ??= new ContractClient(app.url, 'work-platform', 'Problem');
      return workPlatformClient;
    },
    get workPlatform() {
      return { t: testApp, client: testApp.workPlatformClient, fx: fixture.workPlatform };
    },
    fixture,
    sessionSecret,
    store: opened.store,
    engineKind,
    sql: opened.sql,
    openAnother: opened.openAnother,
    get db() {
      if (!opened.sqlite) throw new Error('this test reads the SQLite connection (t.db); on PostgreSQL use t.sql or t.store');
      return opened.sqlite;
    },
    dataDir,
    logLines,
    async close() {
      await app.close();
      await opened.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return testApp;
}

/** Another instance's way to the app's data: a second SQLite connection to the file, or a second PostgreSQL pool. */
export interface OtherInstance {
  store: StoreEngine;
  sql: TestSql;
  close(): Promise<void>;
}

interface OpenedTestEngine extends OtherInstance {
  sqlite?: BetterSqlite3.Database;
  /** What the app's configuration needs to find the same data and counters. */
  env: Record<string, string>;
  openAnother(): Promise<OtherInstance>;
}

function sqliteInstance(databasePath: string): OtherInstance & { sqlite: BetterSqlite3.Database } {
  const db = openDatabase(databasePath);
  let failures = 0;
  return {
    store: sqliteEngine(db),
    sqlite: db,
    sql: {
      rows: async (text, ...params) => db.prepare(text).all(...params) as never,
      row: async (text, ...params) => db.prepare(text).get(...params) as never,
      value: async (text, ...params) => db.prepare(text).pluck().get(...params) as never,
      run: async (text, ...params) => {
        db.prepare(text).run(...params);
      },
      async storedBytes() {
        return Buffer.concat([databasePath, `${databasePath}-wal`].filter((file) => existsSync(file)).map((file) => readFileSync(file)));
      },
      async failInserts(table, when, message) {
        const trigger = `fail_insert_${++failures}`;
        db.exec(`CREATE TRIGGER ${trigger} BEFORE INSERT ON ${table} WHEN ${when} BEGIN SELECT RAISE(ABORT, '${message.replaceAll("'", "''")}'); END`);
        return async () => {
          db.exec(`DROP TRIGGER ${trigger}`);
        };
      },
    },
    async close() {
      db.close();
    },
  };
}

function openSqliteForTest(databasePath: string): OpenedTestEngine {
  return { ...sqliteInstance(databasePath), env: {}, openAnother: async () => sqliteInstance(databasePath) };
}

async function postgresInstance(url: string): Promise<OtherInstance & { sqlite?: undefined }> {
  const { pool } = await openPostgres(url, { poolMax: 4 });
  const engine = postgresEngine(pool);
  const arrays = async (text: string, params: unknown[]) => (await pool.query({ text: postgresStatementText(text), values: params, rowMode: 'array' })).rows;
  const objects = async (text: string, params: unknown[]) => (await pool.query(postgresStatementText(text), params)).rows;
  let failures = 0;
  return {
    store: engine,
    sql: {
      rows: async (text, ...params) => (await objects(text, params)) as never,
      row: async (text, ...params) => (await objects(text, params))[0] as never,
      value: async (text, ...params) => (await arrays(text, params))[0]?.[0] as never,
      run: async (text, ...params) => {
        await pool.query(postgresStatementText(text), params);
      },
      async storedBytes() {
        const tables = await objects("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'", []);
        const texts = await Promise.all(
          tables.map(async ({ name }) => (await arrays(`SELECT coalesce(string_agg(cast(to_jsonb(row) AS text), chr(10)), '') FROM "${name}" row`, []))[0]![0] as string),
        );
        return Buffer.from(texts.join('\n'), 'utf8');
      },
      async failInserts(table, when, message) {
        const trigger = `fail_insert_${++failures}`;
        await pool.query(`CREATE FUNCTION ${trigger}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION '${message.replaceAll("'", "''")}'; END $$`);
        await pool.query(`CREATE TRIGGER ${trigger} BEFORE INSERT ON ${table} FOR EACH ROW WHEN (${when}) EXECUTE FUNCTION ${trigger}()`);
        return async () => {
          await pool.query(`DROP TRIGGER ${trigger} ON ${table}`);
          await pool.query(`DROP FUNCTION ${trigger}()`);
        };
      },
    },
    close: () => engine.close(),
  };
}

/** A database of the app's own: a copy of `template` (the demo's seed), or else of the migrated template. */
async function openPostgresForTest(template?: string): Promise<OpenedTestEngine> {
  const url = await (await sharedPostgresServer()).createDatabase(template ? { template } : { migrated: true });
  const redisUrl = await sharedRedisUrl();
  const instance = await postgresInstance(url);
  return {
    ...instance,
    env: { DATABASE_URL: url, ...redisLimitsEnv({ url: redisUrl }) },
    openAnother: () => postgresInstance(url),
    close: () => instance.close(),
  };
}

/**
 * startTestApp before the file's tests, handing the app to `use` (which keeps what the tests need,
 * `app.workPlatform` for the /v1 suites; a promise it returns is awaited), and closing it after them.
 */
export function useTestApp(use: (app: TestApp) => unknown, options: TestAppOptions = {}): void {
  let app: TestApp | undefined;
  beforeAll(async () => {
    app = await startTestApp(options);
    await use(app);
  });
  afterAll(async () => {
    await app?.close();
  });
}

export function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` };
}
