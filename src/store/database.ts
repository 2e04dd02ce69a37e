import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { projectFile } from '../projectFiles.js';
import { drizzleFor } from './drizzle.js';
import { isEngineUnreachable, StoreUnavailableError } from './errors.js';
import { migrationsAfter } from './migrationJournal.js';
import { revisionTriggers } from './revisionTriggers.js';
import { backfillTaskCompletions } from './tasks.js';
import { sqliteWriteTransactions } from './writeTransactions.js';

/** The committed drizzle-kit migrations, found from the project root rather than from the working directory. */
export const migrationsFolder = projectFile('db/migrations');

const migrationAttempts = 5;

/** How long start-up (and the admin CLI) waits for another process's lock. */
const MIGRATION_BUSY_TIMEOUT_MS = 5000;

/**
 * Opens (creating if needed) the SQLite database at `path` and brings its schema up to date.
 * Safe to call from several processes on one file at once, and again on an open file.
 */
export function openDatabase(path: string, options: { busyTimeoutMs?: number } = {}): BetterSqlite3.Database {
  if (path !== ':memory:') {
    // Readable by the owner only: the file holds key and token hashes and sealed secrets. SQLite
    // gives the -wal and -shm files the database file's mode.
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    closeSync(openSync(path, 'a', 0o600));
  }
  const db = new BetterSqlite3(path);
  try {
    // busy_timeout first: the journal-mode switch and the migrations may wait for another process.
    db.pragma(`busy_timeout = ${MIGRATION_BUSY_TIMEOUT_MS}`);
    db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    db.pragma('synchronous = NORMAL');
    applyMigrations(db);
    checkRevisionTriggers(db);
    backfillTaskCompletions(db);
    // better-sqlite3 waits for a lock synchronously: a serving process keeps the wait short and
    // retries without blocking (src/contract/databaseBusy.ts), so one writer elsewhere cannot freeze it.
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? MIGRATION_BUSY_TIMEOUT_MS}`);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

function applyMigrations(db: BetterSqlite3.Database): void {
  // Two processes starting on a fresh file can both decide that a migration is missing; the second
  // then fails inside its own transaction (for example "table already exists") and rolls back.
  // Running migrate() again re-reads the journal table and finds nothing left to do.
  for (let attempt = 1; ; attempt += 1) {
    try {
      // migrate() reads and hashes every migration file even when none is due: on an up-to-date database the journal says so.
      if (migrationsAfter(migrationsFolder, lastAppliedMigrationMillis(db)).length === 0) return;
      migrate(drizzleFor(db), { migrationsFolder });
      return;
    } catch (error) {
      if (attempt >= migrationAttempts) throw error;
    }
  }
}

/** The newest `created_at` of drizzle's migrations table (see migrationJournal.ts), or null before the first migration. */
export function lastAppliedMigrationMillis(db: BetterSqlite3.Database): number | null {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get();
  if (!table) return null;
  const last = db.prepare('SELECT max(created_at) FROM __drizzle_migrations').pluck().get() as number | bigint | null;
  return last === null ? null : Number(last);
}

function checkRevisionTriggers(db: BetterSqlite3.Database): void {
  const present = new Set(db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'").pluck().all() as string[]);
  const missing = revisionTriggers.filter((name) => !present.has(name));
  if (missing.length > 0) {
    throw new Error(
      `The database lacks the triggers ${missing.join(', ')}: a migration dropped them (drizzle-kit does not track triggers). ` +
        'Add a migration that creates them again (see db/migrations/0013_collection_revision_slots.sql and 0005_portfolio_revision_triggers.sql).',
    );
  }
}

/**
 * Runs `fn` in one BEGIN IMMEDIATE transaction: the write lock is taken at the start (waiting up
 * to busy_timeout), so that concurrent writers, in this process or another, are serialized.
 * Store writes called inside nest as savepoints and commit or roll back with it.
 */
export function runInImmediateTransaction<T>(db: BetterSqlite3.Database, fn: () => T): T {
  // A transaction of another async context is open on this connection (src/store/writeTransactions.ts):
  // starting here would nest in it and commit or roll back with somebody else's change.
  if (sqliteWriteTransactions(db).heldElsewhere()) throw new TransactionOpenElsewhereError();
  let transaction = immediateTransactions.get(db);
  if (!transaction) {
    transaction = db.transaction((body: () => unknown) => body());
    immediateTransactions.set(db, transaction);
  }
  return transaction.immediate(fn) as T;
}

/** One transaction function per connection, made on first use rather than per call. */
const immediateTransactions = new WeakMap<BetterSqlite3.Database, BetterSqlite3.Transaction<(body: () => unknown) => unknown>>();

/** A synchronous write found this process's own asynchronous transaction open: busy, like another process's lock. */
export class TransactionOpenElsewhereError extends Error {
  constructor() {
    super('a write transaction of another request is open on this connection');
  }
}

/**
 * The engine's answer when the change could not get its turn: on SQLite another connection held the
 * write lock past the busy timeout (or this process's own open transaction); on PostgreSQL a
 * serialization failure or deadlock outlasted the engine's retries, or a lock wait its timeout.
 */
export function isDatabaseBusy(error: unknown): boolean {
  if (error instanceof TransactionOpenElsewhereError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && busyCodes.has(code);
}

const busyCodes = new Set(['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_LOCKED', '40001', '40P01', '55P03']);

/**
 * The one question callers outside the store ask of a failure: is the database unavailable (busy
 * or unreachable) rather than the call wrong? The engines raise StoreUnavailableError; the driver's
 * own busy and outage errors, from code that runs the driver directly, are recognized too.
 */
export function asStoreUnavailable(error: unknown): StoreUnavailableError | undefined {
  if (error instanceof StoreUnavailableError) return error;
  if (isDatabaseBusy(error)) return new StoreUnavailableError('busy', { cause: error });
  if (isEngineUnreachable(error)) return new StoreUnavailableError('unreachable', { cause: error });
  return undefined;
}
