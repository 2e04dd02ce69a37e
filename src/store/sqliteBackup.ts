// Copies of the SQLite database that are consistent while servers keep writing: SQLite's online
// backup API (better-sqlite3's db.backup()), never a file copy, which in WAL mode can miss
// committed transactions still in the -wal file.
import { closeSync, existsSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { lastAppliedMigrationMillis, migrationsFolder } from './database.js';
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

/**
 * Before an upgrade: when the SQLite file at `path` exists, already holds a schema and lacks some of
 * the folder's migrations, copies it to `<path>.before-<first pending migration>.<time>.bak` (mode
 * 0600) and returns that path; otherwise (a new database, nothing pending) copies nothing.
 */
export async function backupBeforeMigrating(path: string, options: { now?: () => number; migrationsFolder?: string } = {}): Promise<string | undefined> {
  if (path === ':memory:' || !existsSync(path)) return undefined;
  const db = new BetterSqlite3(path, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    const last = lastAppliedMigrationMillis(db);
    if (last === null) return undefined;
    const pending = migrationsAfter(options.migrationsFolder ?? migrationsFolder, last);
    if (pending.length === 0) return undefined;
    const stamp = new Date((options.now ?? Date.now)()).toISOString().replace(/[:.]/g, '-');
    const target = `${path}.before-${pending[0]}.${stamp}.bak`;
    await backupSqliteDatabase(db, target);
    return target;
  } finally {
    db.close();
  }
}
