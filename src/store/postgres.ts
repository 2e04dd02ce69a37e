// PostgreSQL: a connection pool (node-postgres) whose database is checked and brought up to date
// (db/postgres/schema.ts's migrations) at open; the stores run on it through src/store/engine.ts.
import { projectFile } from '../projectFiles.js';
import pg from 'pg';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import * as schema from '../../db/postgres/schema.js';
import { revisionTriggers } from './revisionTriggers.js';
import { cachedRowNoticeTriggers } from './cachedRows.js';
import { migrationsAfter } from './migrationJournal.js';

/** The committed drizzle-kit migrations of PostgreSQL, found from this file rather than from the working directory. */
export const postgresMigrationsFolder = projectFile('db/postgres/migrations');

export type PostgresOrm = NodePgDatabase<typeof schema>;

export interface PostgresOptions {
  /** Connections at most in this process's pool. */
  poolMax?: number;
  /** How long to wait for a new connection (and for a free one when the pool is full) before failing. */
  connectTimeoutMs?: number;
  /** The server cancels any statement running longer (0: no limit). Migrations run without it. */
  statementTimeoutMs?: number;
  /** Named in pg_stat_activity, to tell the app's connections apart. */
  applicationName?: string;
  /** An idle connection broke (the server restarted, the network dropped): the pool replaces it. */
  onIdleConnectionError?: (error: Error) => void;
}

export interface PostgresDatabase {
  pool: pg.Pool;
  orm: PostgresOrm;
  /** The migrations this open applied, oldest first (`0001_revision_triggers`); empty when the database was up to date. */
  appliedMigrations: string[];
  close(): Promise<void>;
}

/**
 * Any number taken by nothing else: the session-level advisory lock that serializes migrating
 * between processes opening the same database at once.
 */
const MIGRATION_LOCK_KEY = 4_711_016_016;

/** int8 values as numbers: every integer column is bigint holding at most Number.MAX_SAFE_INTEGER (see db/postgres/schema.ts). */
const INT8_OID = 20;
const typesReadingInt8AsNumber = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary' ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/**
 * Opens a pool on the PostgreSQL database at `url` and brings its schema up to date. Safe when
 * several processes open one database at once: one migrates while the others wait for its lock,
 * then find nothing left to do.
 */
export async function openPostgres(url: string, options: PostgresOptions = {}): Promise<PostgresDatabase> {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolMax ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
    statement_timeout: options.statementTimeoutMs ?? 0,
    application_name: options.applicationName ?? 'contract-api-server',
    types: typesReadingInt8AsNumber,
  });
  // Without a listener an idle connection's error would end the process.
  pool.on('error', (error) => options.onIdleConnectionError?.(error));
  try {
    await checkCodePointCollation(pool);
    const appliedMigrations = await applyPostgresMigrations(pool);
    await checkPostgresRevisionTriggers(pool);
    return { pool, orm: drizzle({ client: pool, schema }), appliedMigrations, close: () => pool.end() };
  } catch (error) {
    await pool.end();
    throw error;
  }
}

async function applyPostgresMigrations(pool: pg.Pool): Promise<string[]> {
  const client = await pool.connect();
  try {
    // A long migration must not be cut off by the serving statement timeout, nor must waiting for the lock.
    await client.query('SET statement_timeout = 0');
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      const pending = migrationsAfter(postgresMigrationsFolder, await lastAppliedMigrationMillis(client));
      if (pending.length > 0) await migrate(drizzle({ client }), { migrationsFolder: postgresMigrationsFolder });
      return pending;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
      await client.query('RESET statement_timeout');
    }
  } finally {
    client.release();
  }
}

/** The newest `created_at` of drizzle's migrations table (see migrationJournal.ts), or null before the first migration. */
async function lastAppliedMigrationMillis(client: pg.PoolClient): Promise<number | null> {
  const table = await client.query<{ exists: boolean }>("SELECT to_regclass('drizzle.__drizzle_migrations') IS NOT NULL AS exists");
  if (!table.rows[0]?.exists) return null;
  const { rows } = await client.query<{ last: string | null }>('SELECT max(created_at)::text AS last FROM drizzle.__drizzle_migrations');
  return rows[0]?.last ? Number(rows[0].last) : null;
}

/** Collations that compare text by code point, as SQLite does. */
const codePointCollations = new Set(['C', 'POSIX', 'C.UTF-8', 'C.utf8']);

/**
 * Lists sorted by a text field page by the database's order of text: on SQLite the code point.
 * A database created with a language's collation (en_US.UTF-8, the default of many installs)
 * would sort `a` before `B` here and not there, so it is refused with the way to create one.
 */
async function checkCodePointCollation(pool: pg.Pool): Promise<void> {
  // datlocprovider exists from PostgreSQL 15 on ('c' libc, 'i' ICU, 'b' builtin): read through to_jsonb so older servers answer null.
  const { rows } = await pool.query<{ name: string; collation: string; provider: string | null; locale: string | null }>(
    `SELECT datname AS name, datcollate AS collation, to_jsonb(d) ->> 'datlocprovider' AS provider,
            coalesce(to_jsonb(d) ->> 'datlocale', to_jsonb(d) ->> 'daticulocale') AS locale
       FROM pg_database d WHERE datname = current_database()`,
  );
  const database = rows[0];
  const collation = database?.provider === 'i' ? `ICU ${database.locale}` : database?.provider === 'b' ? (database.locale ?? '') : database?.collation;
  if (database && collation !== undefined && !codePointCollations.has(collation)) {
    throw new Error(
      `The database ${database.name} sorts text by the collation ${collation}; the API sorts by code point. ` +
        `Create the database with: CREATE DATABASE ${database.name} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C.UTF-8' LC_CTYPE 'C.UTF-8' ` +
        `(or initdb --locale=C.UTF-8).`,
    );
  }
}

/** The same refusal as SQLite's checkRevisionTriggers (src/store/database.ts): drizzle-kit does not track triggers. */
async function checkPostgresRevisionTriggers(pool: pg.Pool): Promise<void> {
  const { rows } = await pool.query<{ name: string }>(
    "SELECT t.tgname AS name FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE NOT t.tgisinternal AND c.relnamespace = 'public'::regnamespace",
  );
  const present = new Set(rows.map((row) => row.name));
  const missing = [...revisionTriggers, ...cachedRowNoticeTriggers].filter((name) => !present.has(name));
  if (missing.length > 0) {
    throw new Error(
      `The database lacks the triggers ${missing.join(', ')}: a migration dropped them (drizzle-kit does not track triggers). ` +
        'Add a migration that creates them again (see db/postgres/migrations/0001_revision_triggers.sql, 0002_collection_revision_slots.sql and 0005_cached_row_notices.sql).',
    );
  }
}
