// Upgrades cannot delete: a migration that rebuilds a referenced table the way drizzle-kit writes it
// (create new, copy, drop old, rename) keeps every child row, and a migration that would leave
// orphans is refused with the database left as it was.
import { cpSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { loadDemoData } from '../../src/demo/demoData.js';
import { openStore } from '../../src/openStore.js';
import { MigrationForeignKeyError, migrationsFolder, openDatabase } from '../../src/store/database.js';
import { tempDirsRemovedAfterEach } from './factories.js';
import { runScriptProcess, sourceUrl } from '../support/serverProcess.js';
import { waitFor } from '../webhooks/deliveryFixtures.js';

/** The project's own migrations (its journal's entries): the count a database migrated to the end records. */
const projectMigrations = (JSON.parse(readFileSync(path.join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as { entries: unknown[] }).entries.length;

const tempDir = tempDirsRemovedAfterEach();

/** A migrated database holding the demo data set: rows in nearly every table that references `workspaces`. */
async function demoDatabase(): Promise<{ dir: string; file: string }> {
  const dir = tempDir();
  const file = path.join(dir, 'app.db');
  const db = openDatabase(file);
  await loadDemoData(db, Date.now);
  db.close();
  return { dir, file };
}

/** The committed migrations plus one more, in a folder of the test's own. */
function migrationsWith(dir: string, tag: string, statements: string[]): string {
  const folder = path.join(dir, 'migrations');
  cpSync(migrationsFolder, folder, { recursive: true });
  const journalPath = path.join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: { idx: number; version: string; when: number; tag: string; breakpoints: boolean }[] };
  const last = journal.entries.at(-1)!;
  journal.entries.push({ idx: last.idx + 1, version: last.version, when: last.when + 1000, tag, breakpoints: true });
  writeFileSync(journalPath, JSON.stringify(journal, null, 2));
  writeFileSync(path.join(folder, `${tag}.sql`), statements.join('\n--> statement-breakpoint\n'));
  return folder;
}

/**
 * What drizzle-kit generates when a column of `table` changes in a way ALTER TABLE cannot do: the
 * triggers naming it dropped first (SQLite refuses the rename while one names a missing table), a
 * new table, the copy, DROP of the old one, the rename, then its indexes and the triggers again.
 */
function drizzleKitRebuild(db: BetterSqlite3.Database, table: string): string[] {
  const tableSql = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").pluck().get(table) as string;
  const columns = (db.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(table) as string[]).map((name) => `\`${name}\``).join(', ');
  const indexes = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL").pluck().all(table) as string[];
  const triggers = (db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").all() as { name: string; sql: string }[]).filter((trigger) =>
    new RegExp(`\\b${table}\\b`).test(trigger.sql),
  );
  const newTable = `__new_${table}`;
  return [
    ...triggers.map((trigger) => `DROP TRIGGER \`${trigger.name}\`;`),
    // Its CHECK constraints name the table's columns with the table's name, as drizzle-kit writes them.
    tableSql.replace(/^CREATE TABLE [`"]?\w+[`"]?/, `CREATE TABLE \`${newTable}\``).replaceAll(`"${table}".`, `"${newTable}".`) + ';',
    `INSERT INTO \`${newTable}\` (${columns}) SELECT ${columns} FROM \`${table}\`;`,
    `DROP TABLE \`${table}\`;`,
    `ALTER TABLE \`${newTable}\` RENAME TO \`${table}\`;`,
    ...indexes.map((index) => `${index};`),
    ...triggers.map((trigger) => `${trigger.sql};`),
  ];
}

/** Rows per table, drizzle's own bookkeeping aside. */
function rowCounts(file: string): Record<string, number> {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '__drizzle_migrations' ORDER BY name").pluck().all() as string[];
    return Object.fromEntries(tables.map((table) => [table, db.prepare(`SELECT count(*) FROM "${table}"`).pluck().get() as number]));
  } finally {
    db.close();
  }
}

function rebuildOf(file: string, table: string): string[] {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    return drizzleKitRebuild(db, table);
  } finally {
    db.close();
  }
}

describe('migrations that rebuild a referenced table', () => {
  it('keep every child row of the rebuilt table (workspaces: everything of the Work-Platform)', async () => {
    const { dir, file } = await demoDatabase();
    const before = rowCounts(file);
    expect(before.tasks).toBeGreaterThan(0);
    expect(before.users).toBeGreaterThan(0);
    const folder = migrationsWith(dir, '0099_rebuild_workspaces', rebuildOf(file, 'workspaces'));

    const db = openDatabase(file, { migrationsFolder: folder });
    try {
      expect(db.prepare('SELECT count(*) FROM __drizzle_migrations').pluck().get()).toBe(projectMigrations + 1);
      expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
      expect(db.pragma('foreign_key_check')).toEqual([]);
    } finally {
      db.close();
    }
    expect(rowCounts(file)).toEqual(before);
  });

  it('would lose them with foreign keys on, as drizzle\'s own migrator runs it (what the test above guards against)', async () => {
    const { dir, file } = await demoDatabase();
    const before = rowCounts(file);
    const folder = migrationsWith(dir, '0099_rebuild_workspaces', rebuildOf(file, 'workspaces'));

    const db = new BetterSqlite3(file);
    db.pragma('foreign_keys = ON');
    migrate(drizzle(db), { migrationsFolder: folder });
    db.close();
    const after = rowCounts(file);
    expect(after.workspaces).toBe(before.workspaces);
    expect(before.tasks).toBeGreaterThan(0);
    expect(after.tasks).toBe(0);
    expect(after.users).toBe(0);
  });

  it('refuses migrations that leave a row without its parent, and leaves the database as it was', async () => {
    const { dir, file } = await demoDatabase();
    const before = rowCounts(file);
    const db = new BetterSqlite3(file, { readonly: true });
    const workspaceId = db.prepare('SELECT workspace_id FROM tasks LIMIT 1').pluck().get() as string;
    const schemaBefore = db.prepare('SELECT type, name, sql FROM sqlite_master ORDER BY name').all();
    db.close();
    // A rebuild that forgets to copy one workspace: its tasks, users and projects would point at nothing.
    const statements = rebuildOf(file, 'workspaces').map((statement) =>
      statement.startsWith('INSERT INTO `__new_workspaces`') ? statement.replace(/;$/, ` WHERE \`id\` <> '${workspaceId}';`) : statement,
    );
    const folder = migrationsWith(dir, '0099_rebuild_workspaces_badly', statements);

    let refusal: unknown;
    try {
      openDatabase(file, { migrationsFolder: folder }).close();
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(MigrationForeignKeyError);
    expect((refusal as Error).message).toMatch(/0099_rebuild_workspaces_badly would leave rows without their parent \(.*tasks → workspaces.*\)\. Nothing was applied/);

    expect(rowCounts(file)).toEqual(before);
    const after = new BetterSqlite3(file, { readonly: true });
    try {
      expect(after.prepare('SELECT type, name, sql FROM sqlite_master ORDER BY name').all()).toEqual(schemaBefore);
      expect(after.prepare('SELECT count(*) FROM __drizzle_migrations').pluck().get()).toBe(projectMigrations);
    } finally {
      after.close();
    }
    // The committed migrations still open it.
    openDatabase(file).close();
  });
});

describe('the copy taken before an upgrade', () => {
  it('is taken when an existing database has pending migrations: owner-only, holding the data as it was before', async () => {
    const { dir, file } = await demoDatabase();
    const before = rowCounts(file);
    const folder = migrationsWith(dir, '0099_rebuild_workspaces', rebuildOf(file, 'workspaces'));

    const store = await openStore({ postgres: undefined, databasePath: file, migrationsFolder: folder });
    await store.close();
    expect(store.migrationBackup).toMatch(new RegExp(`^${file.replace(/[.\\/]/g, '\\$&')}\\.before-0099_rebuild_workspaces\\.\\d{4}-\\d\\d-\\d\\dT[\\d-]+Z\\.bak$`));
    const backup = store.migrationBackup!;
    expect(statSync(backup).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir).filter((name) => name.includes('.partial'))).toEqual([]);
    expect(rowCounts(backup)).toEqual(before);
    const copy = new BetterSqlite3(backup, { readonly: true });
    try {
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(copy.prepare('SELECT count(*) FROM __drizzle_migrations').pluck().get()).toBe(projectMigrations);
    } finally {
      copy.close();
    }
  });

  it('is taken once, under the migrations\' lock, when several processes start on one file at once', async () => {
    const { dir, file } = await demoDatabase();
    const before = rowCounts(file);
    const folder = migrationsWith(dir, '0099_rebuild_workspaces', rebuildOf(file, 'workspaces'));
    const ready = path.join(dir, 'ready');
    mkdirSync(ready);
    const script = `const { openStore } = await import(${sourceUrl('src/openStore.ts')});
const { writeFileSync } = await import('node:fs');
writeFileSync(${JSON.stringify(ready)} + '/' + process.pid, '');
const store = await openStore({ postgres: undefined, databasePath: ${JSON.stringify(file)}, migrationsFolder: ${JSON.stringify(folder)} });
await store.close();
process.stdout.write(JSON.stringify({ backup: store.migrationBackup ?? null }));`;
    // Another writer holds the lock while the three start: each finds migrations pending; none may copy until it has the lock.
    const holder = new BetterSqlite3(file);
    holder.exec('BEGIN IMMEDIATE');
    const finished = Promise.all([1, 2, 3].map(() => runScriptProcess(script)));
    const copies = () => readdirSync(dir).filter((name) => name.endsWith('.bak'));
    try {
      await waitFor(() => readdirSync(ready).length === 3, 'the three processes to start', 30_000);
      // A copy taken outside the lock would appear now (a copy reads past a writer): give it two seconds to.
      await waitFor(() => copies().length > 0, 'a copy', 2_000).catch(() => undefined);
      expect(copies()).toEqual([]);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    const runs = await finished;
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
    const backups = runs.map((run) => (JSON.parse(run.stdout) as { backup: string | null }).backup).filter((backup) => backup !== null);
    expect(backups).toHaveLength(1);
    expect(readdirSync(dir).filter((name) => name.endsWith('.bak'))).toEqual([path.basename(backups[0]!)]);
    // The copy is the database as it was before the one migration that ran, which every process then found applied.
    expect(rowCounts(backups[0]!)).toEqual(before);
    expect(rowCounts(file)).toEqual(before);
    const migrated = new BetterSqlite3(file, { readonly: true });
    try {
      expect(migrated.prepare('SELECT count(*) FROM __drizzle_migrations').pluck().get()).toBe(projectMigrations + 1);
    } finally {
      migrated.close();
    }
  }, 60_000);

  it('is not taken when told not to (BACKUP_BEFORE_MIGRATE=off), for a new database, or when nothing is pending', async () => {
    const { dir, file } = await demoDatabase();
    const folder = migrationsWith(dir, '0099_rebuild_workspaces', rebuildOf(file, 'workspaces'));
    const skipped = await openStore({ postgres: undefined, databasePath: file, migrationsFolder: folder, backupBeforeMigrate: false });
    await skipped.close();
    expect(skipped.migrationBackup).toBeUndefined();
    const upToDate = await openStore({ postgres: undefined, databasePath: file, migrationsFolder: folder });
    await upToDate.close();
    expect(upToDate.migrationBackup).toBeUndefined();
    const fresh = await openStore({ postgres: undefined, databasePath: path.join(dir, 'new.db') });
    await fresh.close();
    expect(fresh.migrationBackup).toBeUndefined();
    expect(readdirSync(dir).filter((name) => name.endsWith('.bak'))).toEqual([]);
  });

  it('is a setting of the server and the admin CLI: BACKUP_BEFORE_MIGRATE, on by default', () => {
    expect(loadConfig({}).backupBeforeMigrate).toBe(true);
    expect(loadConfig({ BACKUP_BEFORE_MIGRATE: 'off' }).backupBeforeMigrate).toBe(false);
    expect(() => loadConfig({ BACKUP_BEFORE_MIGRATE: 'sometimes' })).toThrow(/BACKUP_BEFORE_MIGRATE must be on or off/);
  });
});
