import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { projectFile } from '../projectFiles.js';
import { isEngineUnreachable, StoreUnavailableError } from './errors.js';
import { migrationsAfter } from './migrationJournal.js';
import { revisionTriggers } from './revisionTriggers.js';
import { backfillTaskCompletions } from './tasks.js';
import { sqliteWriteTransactions } from './writeTransactions.js';

/** The committed drizzle-kit migrations, found from the project root rather than from the working directory. */
export const migrationsFolder = projectFile('db/migrations');

/** How long start-up (and the admin CLI) waits for another process's lock. */
const MIGRATION_BUSY_TIMEOUT_MS = 5000;

/**
 * Opens (creating if needed) the SQLite database at `path` and brings its schema up to date.
 * Safe to call from several processes on one file at once, and again on an open file.
 */
export function openDatabase(path: string, options: { busyTimeoutMs?: number; migrationsFolder?: string } = {}): BetterSqlite3.Database {
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
    applyMigrations(db, options.migrationsFolder);
    checkRevisionTriggers(db);
    backfillTaskCompletions(db);
    // better-sqlite3 waits for a lock synchronously: a serving process keeps the wait short and
    // retries without blocking (src/store/busyWrites.ts), so one writer elsewhere cannot freeze it.
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? MIGRATION_BUSY_TIMEOUT_MS}`);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/**
 * Applies the folder's pending migrations the way drizzle's migrator records them (its
 * __drizzle_migrations table, so either can follow the other), but safely for table rebuilds.
 * drizzle-kit rebuilds a table by creating a new one, copying, dropping the old one and renaming:
 * with foreign keys on, the DROP deletes (ON DELETE CASCADE) every child row of the old table, and
 * drizzle's own migrator runs inside a transaction where `PRAGMA foreign_keys = OFF` is ignored.
 * So foreign keys are switched off outside the transaction, every pending migration and then
 * `PRAGMA foreign_key_check` run in one BEGIN IMMEDIATE transaction, and a violation rolls all of
 * it back: the database stays as it was. Foreign keys are on again afterwards, whatever happened.
 * The write lock is taken first, so that several processes starting on one file at once migrate it
 * once: the others wait, then find nothing left to do.
 */
export function applyMigrations(db: BetterSqlite3.Database, folder: string = migrationsFolder): string[] {
  // migrate() would read and hash every migration file even when none is due: on an up-to-date database the journal says so.
  if (migrationsAfter(folder, lastAppliedMigrationMillis(db)).length === 0) return [];
  db.pragma('foreign_keys = OFF');
  try {
    return runInImmediateTransaction(db, () => applyPendingMigrations(db, folder));
  } finally {
    db.pragma('foreign_keys = ON');
  }
}

/**
 * The body of applyMigrations: every migration of the folder newer than the last applied one, then
 * `PRAGMA foreign_key_check`. Runs inside a write transaction taken with foreign keys off.
 */
export function applyPendingMigrations(db: BetterSqlite3.Database, folder: string = migrationsFolder): string[] {
  const migrations = readMigrationFiles({ migrationsFolder: folder });
  const tags = migrationTags(folder);
  db.exec('CREATE TABLE IF NOT EXISTS "__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)');
  const last = lastAppliedMigrationMillis(db);
  const record = db.prepare('INSERT INTO "__drizzle_migrations" ("hash", "created_at") VALUES (?, ?)');
  const applied: string[] = [];
  for (const migration of migrations) {
    if (last !== null && migration.folderMillis <= last) continue;
    for (const statement of migration.sql) db.exec(statement);
    record.run(migration.hash, migration.folderMillis);
    applied.push(tags.get(migration.folderMillis) ?? String(migration.folderMillis));
  }
  const violations = db.pragma('foreign_key_check') as ForeignKeyViolation[];
  if (violations.length > 0) throw new MigrationForeignKeyError(applied, violations);
  return applied;
}

interface ForeignKeyViolation {
  table: string;
  rowid: number | null;
  parent: string;
  fkid: number;
}

/** Pending migrations would leave rows whose parent is missing: nothing of them was applied. */
export class MigrationForeignKeyError extends Error {
  constructor(
    readonly migrations: string[],
    readonly violations: ForeignKeyViolation[],
  ) {
    const counts = new Map<string, number>();
    for (const violation of violations) {
      const key = `${violation.table} → ${violation.parent}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    super(
      `The migrations ${migrations.join(', ')} would leave rows without their parent (${[...counts].map(([key, count]) => `${count} in ${key}`).join('; ')}). ` +
        'Nothing was applied: the database is as it was before. Fix the migration and start again.',
    );
  }
}

function migrationTags(folder: string): Map<number, string> {
  const journal = JSON.parse(readFileSync(join(folder, 'meta', '_journal.json'), 'utf8')) as { entries: { tag: string; when: number }[] };
  return new Map(journal.entries.map((entry) => [entry.when, entry.tag]));
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
