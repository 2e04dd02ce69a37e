// Copies of the SQLite database that are consistent while servers keep writing: SQLite's online
// backup API (better-sqlite3's db.backup()), never a file copy, which in WAL mode can miss
// committed transactions still in the -wal file.
import { closeSync, existsSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { applyPendingMigrations, lastAppliedMigrationMillis, migrationsFolder } from './database.js';
import { migrationsAfter } from './migrationJournal.js';

/**
 * Copies the open database `db` into `target`, readable by the owner only (mode 0600). The copy is
 * one snapshot: every transaction committed before the copy's read began, nothing after. It is
 * written beside `target` and renamed into place, so `target` is either complete or untouched.
 */
export async function backupSqliteDatabase(db: BetterSqlite3.Database, target: string): Promise<{ bytes: number }> {
  const partial = `${target}.${process.pid}.partial`;
  // Created first with its mode: the copy is never readable by others, not even while it is written.
  closeSync(openSync(partial, 'wx', 0o600));
  try {
    // After the first step, which only counts the pages, all of them in one step: a copy taken in
    // small steps restarts whenever another process commits, and under steady writes might never end.
    await db.backup(partial, { progress: () => 0x7fffffff });
    // The copy carries the source's WAL mode in its header; in rollback mode it is one
    // self-contained file, and opening it (read-only too) leaves no -wal and -shm beside it.
    const copy = new BetterSqlite3(partial, { fileMustExist: true });
    try {
      copy.pragma('journal_mode = DELETE');
    } finally {
      copy.close();
    }
    renameSync(partial, target);
  } catch (error) {
    rmSync(partial, { force: true });
    for (const suffix of ['-journal', '-wal', '-shm']) rmSync(`${partial}${suffix}`, { force: true });
    throw error;
  }
  return { bytes: statSync(target).size };
}

/** How long a start waits for another process that is copying and migrating the same file. */
const UPGRADE_LOCK_WAIT_MS = 120_000;

/**
 * Before an upgrade: when the SQLite file at `path` exists, already holds a schema and lacks some of
 * the folder's migrations, copies it to `<path>.before-<first pending migration>.<time>.bak` (mode
 * 0600), applies the pending migrations and returns the copy's path; otherwise (a new database,
 * nothing pending) does nothing. The check, the copy and the migrations run under one write lock:
 * the copy is exactly what was migrated, and of several processes starting at once only the first
 * copies; the others wait (up to two minutes), then find nothing pending. Writers of other
 * processes wait (or answer 503 busy) while the copy is taken.
 */
export async function backupAndMigrate(path: string, options: { now?: () => number; migrationsFolder?: string } = {}): Promise<string | undefined> {
  if (path === ':memory:' || !existsSync(path)) return undefined;
  const folder = options.migrationsFolder ?? migrationsFolder;
  const pendingNow = (db: BetterSqlite3.Database) => {
    const last = lastAppliedMigrationMillis(db);
    return last === null ? [] : migrationsAfter(folder, last);
  };
  const lock = new BetterSqlite3(path, { fileMustExist: true });
  try {
    // Without the lock first: a database that is up to date (every start but the first after an upgrade) takes no write lock.
    if (pendingNow(lock).length === 0) return undefined;
    lock.pragma(`busy_timeout = ${UPGRADE_LOCK_WAIT_MS}`);
    // Ignored inside a transaction: off before it (see applyMigrations).
    lock.pragma('foreign_keys = OFF');
    lock.exec('BEGIN IMMEDIATE');
    const pending = pendingNow(lock);
    if (pending.length === 0) return undefined;
    const stamp = new Date((options.now ?? Date.now)()).toISOString().replace(/[:.]/g, '-');
    const target = `${path}.before-${pending[0]}.${stamp}.bak`;
    // From a second connection: it reads the state under the lock (WAL readers do not wait for a writer).
    const source = new BetterSqlite3(path, { fileMustExist: true, readonly: true });
    try {
      await backupSqliteDatabase(source, target);
    } finally {
      source.close();
    }
    applyPendingMigrations(lock, folder);
    lock.exec('COMMIT');
    return target;
  } finally {
    if (lock.inTransaction) lock.exec('ROLLBACK');
    lock.close();
  }
}
