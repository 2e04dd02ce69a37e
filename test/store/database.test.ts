import { maxLengths } from '../../generated/work-platform/rules.js';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrationsFolder, openDatabase } from '../../src/store/database.js';
import { tempDirsRemovedAfterEach } from './factories.js';
import { runScriptProcess, sourceUrl } from '../support/serverProcess.js';

const tempDir = tempDirsRemovedAfterEach();

const expectedTables = [
  'api_keys',
  'assets',
  'portfolio_items',
  'portfolios',
  'rate_limit_counters',
  'tenants',
  'workspaces',
  'users',
  'personal_access_tokens',
  'projects',
  'tasks',
  'events',
  'idempotency_keys',
  'quota_counters',
];

/** How many migrations drizzle-kit has written: each must be applied exactly once. */
const migrationCount = (JSON.parse(readFileSync(path.join(migrationsFolder, 'meta/_journal.json'), 'utf8')) as { entries: unknown[] }).entries.length;

describe('openDatabase', () => {
  it('creates the parent directories, applies the migrations and sets the pragmas', () => {
    const file = path.join(tempDir(), 'a', 'b', 'app.db');
    const db = openDatabase(file);
    try {
      expect(existsSync(file)).toBe(true);
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
      expect(tables).toEqual(expect.arrayContaining(expectedTables));
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
      expect(db.pragma('busy_timeout', { simple: true })).toBe(5000);
      expect(db.pragma('synchronous', { simple: true })).toBe(1); // NORMAL
    } finally {
      db.close();
    }
  });

  it('is idempotent: reopening applies nothing twice and keeps the data', () => {
    const file = path.join(tempDir(), 'app.db');
    const first = openDatabase(file);
    first.prepare("INSERT INTO tenants (id, name, created_at) VALUES ('ten_a', 'A', 1)").run();
    const migrations = first.prepare('SELECT count(*) FROM __drizzle_migrations').pluck().get();
    first.close();
    const second = openDatabase(file);
    const third = openDatabase(file);
    try {
      expect(second.prepare('SELECT count(*) FROM __drizzle_migrations').pluck().get()).toBe(migrations);
      expect(second.prepare('SELECT name FROM tenants').pluck().all()).toEqual(['A']);
    } finally {
      second.close();
      third.close();
    }
  });

  it('enforces foreign keys and the boolean and kind checks', () => {
    const db = openDatabase(path.join(tempDir(), 'app.db'));
    try {
      expect(() =>
        db.prepare("INSERT INTO api_keys (id, tenant_id, key_hash, key_prefix, created_at) VALUES ('key_x', 'ten_missing', 'h', 'p', 1)").run(),
      ).toThrow(/FOREIGN KEY/);
      db.prepare("INSERT INTO tenants (id, name, created_at) VALUES ('ten_a', 'A', 1)").run();
      db.prepare("INSERT INTO portfolios (tenant_id, published, profile_source_json, profile_rendered_json, document_json, updated_at) VALUES ('ten_a', 1, '{}', '{}', '{}', 1)").run();
      expect(() =>
        db.prepare("INSERT INTO portfolio_items (tenant_id, kind, position, published, source_json, rendered_json) VALUES ('ten_a', 'video', 0, 1, '{}', '{}')").run(),
      ).toThrow(/CHECK/);
      expect(() =>
        db.prepare("INSERT INTO portfolio_items (tenant_id, kind, position, published, source_json, rendered_json) VALUES ('ten_a', 'post', 0, 2, '{}', '{}')").run(),
      ).toThrow(/CHECK/);
    } finally {
      db.close();
    }
  });

  it("holds text to the contract's storage limits in its CHECK constraints, the same values the stores check", () => {
    const db = openDatabase(path.join(tempDir(), 'app.db'));
    try {
      const sqlOf = (table: string) => db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").pluck().get(table) as string;
      expect(sqlOf('projects')).toContain(`length("name") BETWEEN 1 AND ${maxLengths.Project.name}`);
      expect(sqlOf('projects')).toContain(`length("description") <= ${maxLengths.Project.description}`);
      expect(sqlOf('tasks')).toContain(`length("title") BETWEEN 1 AND ${maxLengths.Task.title}`);
    } finally {
      db.close();
    }
  });

  it('finds its migrations from its own location, and several processes can open one new file at once', async () => {
    // Each child runs in the temp directory (so a cwd-relative migrations path would fail) and
    // they all race to migrate the same fresh file.
    const dir = tempDir();
    const file = path.join(dir, 'shared.db');
    const script = `const { openDatabase } = await import(${sourceUrl('src/store/database.ts')});
const db = openDatabase(${JSON.stringify(file)});
db.prepare("INSERT INTO tenants (id, name, created_at) VALUES (?, 'x', 1)").run('ten_' + process.pid);
db.close();`;
    const results = await Promise.all([1, 2, 3, 4].map(() => runScriptProcess(script, { cwd: dir })));
    for (const result of results) expect(result, result.stderr).toMatchObject({ code: 0 });
    const db = openDatabase(file);
    try {
      expect(db.prepare('SELECT count(*) FROM tenants').pluck().get()).toBe(4);
      expect(db.prepare('SELECT count(*) FROM __drizzle_migrations').pluck().get()).toBe(migrationCount);
    } finally {
      db.close();
    }
  });
});

describe('revision triggers', () => {
  it('refuses a database whose revision triggers a later migration dropped, naming them', () => {
    const file = path.join(tempDir(), 'app.db');
    openDatabase(file).close();
    const db = new BetterSqlite3(file);
    db.exec('DROP TRIGGER tasks_update_revision; DROP TRIGGER assets_delete_revision');
    db.close();
    expect(() => openDatabase(file)).toThrow(/tasks_update_revision, assets_delete_revision/);
  });
});
