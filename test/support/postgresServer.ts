// A real PostgreSQL server for tests: initdb into a fresh temporary folder, started by pg_ctl on a
// free port, reached over TCP on 127.0.0.1. Nothing here fakes the engine.
//
// One server per test run, started lazily: vitest's globalSetup (test/support/postgresGlobalSetup.ts)
// only hands every test process a rendezvous folder; the first test file that asks for the server
// (sharedPostgresServer) starts it and writes its URL there, the others wait for that file, and the
// global teardown stops it. A run without PostgreSQL tests never starts one. Each test file then
// takes its own database: an empty one, or a clone of a template migrated once per server (CREATE
// DATABASE … TEMPLATE copies files, far quicker than running the migrations again).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { freePort } from './freePort.js';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { giveToPostgresUser, startLocalPostgres, stopLocalPostgres } from '../../scripts/localEngines.js';
import { joinOrStart, startedInRendezvous } from './rendezvous.js';

export interface PostgresServer {
  /** The `postgres` maintenance database, as the superuser `app` (no password: trust on 127.0.0.1). */
  url: string;
  /**
   * A new database of its own, returning its URL: empty; with `{ migrated: true }` a clone of a
   * template this server migrated once (every migration of db/postgres/migrations applied); with
   * `{ template }` a clone of that database.
   */
  createDatabase(options?: { migrated?: boolean; template?: string }): Promise<string>;
  /** Stops the server and deletes its folder. */
  stop(): Promise<void>;
}

/** Where a started server lives: enough for another process to stop it. */
interface ServerLocation {
  url: string;
  folder: string;
}

async function stopServer(location: Pick<ServerLocation, 'folder'>): Promise<void> {
  // Test data is thrown away: no shutdown checkpoint needed.
  await stopLocalPostgres(location.folder, 'immediate');
  rmSync(location.folder, { recursive: true, force: true });
}

async function startServerProcess(): Promise<ServerLocation> {
  const folder = mkdtempSync(path.join(tmpdir(), 'test-postgres-'));
  giveToPostgresUser(folder);
  try {
    // Another process may take the free port between the probe and the start: try a few.
    for (let attempt = 1; ; attempt += 1) {
      try {
        return { url: await startLocalPostgres({ folder, port: await freePort(), durable: false }), folder };
      } catch (error) {
        if (attempt >= 3) throw error;
      }
    }
  } catch (error) {
    await stopServer({ folder });
    throw error;
  }
}

/** The URL of another database on the same server. */
export function databaseUrl(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Runs `fn` on one connection to the database at `url`, closing it after. */
export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

function serverHandle(location: ServerLocation, stop: () => Promise<void>): PostgresServer {
  return {
    url: location.url,
    async createDatabase(options = {}) {
      const name = `t_${randomBytes(6).toString('hex')}`;
      const templateName = options.migrated ? await migratedTemplate(location.url) : options.template;
      const template = templateName === undefined ? '' : ` TEMPLATE "${templateName}"`;
      await withClient(location.url, (client) => client.query(`CREATE DATABASE "${name}"${template}`));
      return databaseUrl(location.url, name);
    },
    stop,
  };
}

const migratedTemplateName = 'migrated_template';
const templateLockKey = 4_711_016_017;

/**
 * The name of the server's migrated template, made by the first caller of any test process (the
 * others wait for its advisory lock). Built under another name and renamed when complete, so that
 * a test process that dies while migrating leaves no half-made template behind that name.
 */
function migratedTemplate(serverUrl: string): Promise<string> {
  let template = migratedTemplates.get(serverUrl);
  if (!template) {
    template = makeMigratedTemplate(serverUrl);
    migratedTemplates.set(serverUrl, template);
  }
  return template;
}

const migratedTemplates = new Map<string, Promise<string>>();

async function makeMigratedTemplate(serverUrl: string): Promise<string> {
  await withClient(serverUrl, async (client) => {
    await client.query('SELECT pg_advisory_lock($1)', [templateLockKey]);
    try {
      const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [migratedTemplateName]);
      if (rowCount) return;
      const building = `${migratedTemplateName}_${randomBytes(4).toString('hex')}`;
      await client.query(`CREATE DATABASE "${building}"`);
      const { openPostgres } = await import('../../src/store/postgres.js');
      await (await openPostgres(databaseUrl(serverUrl, building))).close();
      // No connections from here on: CREATE DATABASE … TEMPLATE refuses a template someone is connected to.
      await client.query(`ALTER DATABASE "${building}" WITH ALLOW_CONNECTIONS false`);
      await client.query(`ALTER DATABASE "${building}" RENAME TO "${migratedTemplateName}"`);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [templateLockKey]);
    }
  });
  return migratedTemplateName;
}

/** A server of its own that a test may take down and bring back (an outage or a restart), keeping its data. */
export interface OwnPostgresServer extends PostgresServer {
  /** pg_ctl stop (`fast`: connections are ended as in a restart) of this server only, by its data folder. */
  halt(): Promise<void>;
  /** pg_ctl start of the same data folder on the same port. */
  resume(): Promise<void>;
}

/** A server of its own, for a test that stops or breaks it; most tests want sharedPostgresServer(). */
export async function startPostgresServer(): Promise<OwnPostgresServer> {
  const location = await startServerProcess();
  return {
    ...serverHandle(location, () => stopServer(location)),
    halt: () => stopLocalPostgres(location.folder, 'fast'),
    resume: async () => {
      await startLocalPostgres({ folder: location.folder, port: Number(new URL(location.url).port), durable: false });
    },
  };
}

// ─── One server per test run ────────────────────────────────────────────────────────────────────

declare module 'vitest' {
  export interface ProvidedContext {
    /** A folder of the test run where the first test process to need PostgreSQL leaves the server's location. */
    postgresRendezvous: string;
  }
}

let shared: Promise<PostgresServer> | undefined;

/**
 * The test run's PostgreSQL server, started by whichever test process asks first. Its stop() does
 * nothing: the global teardown stops it once every file is done.
 */
export function sharedPostgresServer(): Promise<PostgresServer> {
  shared ??= joinOrStart(inject('postgresRendezvous'), 'postgres', startServerProcess, 60_000).then((location) => serverHandle(location, async () => undefined));
  return shared;
}

/** For the global teardown: stops the run's server if a test started one. */
export async function stopSharedPostgresServer(rendezvous: string): Promise<void> {
  const location = startedInRendezvous<ServerLocation>(rendezvous, 'postgres');
  if (location) await stopServer(location);
  rmSync(rendezvous, { recursive: true, force: true });
}
