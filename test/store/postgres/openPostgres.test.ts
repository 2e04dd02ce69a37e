import { getTableConfig, PgTable } from 'drizzle-orm/pg-core';
import { is } from 'drizzle-orm';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import * as postgresSchema from '../../../db/postgres/schema.js';
import { openPostgres } from '../../../src/store/postgres.js';
import { revisionTriggers } from '../../../src/store/revisionTriggers.js';
import { cachedRowNoticeTriggers } from '../../../src/store/cachedRows.js';
import { databaseUrl, sharedPostgresServer, withClient } from '../../support/postgresServer.js';
import { runScriptProcess, sourceUrl } from '../../support/serverProcess.js';

const allMigrations = ['0000_initial', '0001_revision_triggers', '0002_collection_revision_slots', '0003_collection_revision_slot_numbers', '0004_resource_creators', '0005_cached_row_notices', '0006_versioned_resource_revisions'];
const schemaTables = (Object.values(postgresSchema) as unknown[])
  .filter((value): value is PgTable => is(value, PgTable))
  .map((table) => getTableConfig(table));

async function emptyDatabase(): Promise<string> {
  return (await sharedPostgresServer()).createDatabase();
}

describe('openPostgres', () => {
  it('on an empty database creates every table, column, index and trigger of the schema', async () => {
    const url = await emptyDatabase();
    const database = await openPostgres(url);
    try {
      expect(database.appliedMigrations).toEqual(allMigrations);
      const columns = await database.pool.query<{ table: string; column: string; type: string; nullable: string }>(
        "SELECT table_name AS table, column_name AS column, data_type AS type, is_nullable AS nullable FROM information_schema.columns WHERE table_schema = 'public'",
      );
      const actual = columns.rows.map((row) => `${row.table}.${row.column} ${row.type} ${row.nullable === 'NO' ? 'not null' : 'null'}`).sort();
      const expected = schemaTables
        .flatMap((table) => table.columns.map((column) => `${table.name}.${column.name} ${column.getSQLType()} ${column.notNull ? 'not null' : 'null'}`))
        .sort();
      expect(actual).toEqual(expected);

      const indexes = await database.pool.query<{ name: string }>("SELECT indexname AS name FROM pg_indexes WHERE schemaname = 'public'");
      const indexNames = new Set(indexes.rows.map((row) => row.name));
      for (const table of schemaTables) {
        for (const index of table.indexes) expect(indexNames, `index ${index.config.name}`).toContain(index.config.name);
        for (const constraint of table.uniqueConstraints) expect(indexNames, `unique ${constraint.getName()}`).toContain(constraint.getName());
      }
      const triggers = await database.pool.query<{ name: string }>('SELECT tgname AS name FROM pg_trigger WHERE NOT tgisinternal');
      expect(triggers.rows.map((row) => row.name).sort()).toEqual([...revisionTriggers, ...cachedRowNoticeTriggers].sort());
    } finally {
      await database.close();
    }
  });

  it('is a no-op on a database that is up to date', async () => {
    const url = await emptyDatabase();
    await (await openPostgres(url)).close();
    const again = await openPostgres(url);
    try {
      expect(again.appliedMigrations).toEqual([]);
      const applied = await again.pool.query<{ n: number }>('SELECT count(*) AS n FROM drizzle.__drizzle_migrations');
      expect(applied.rows[0]!.n).toBe(allMigrations.length);
    } finally {
      await again.close();
    }
  });

  it('lets two processes open one empty database at once: one migrates, the other waits and finds nothing to do', async () => {
    const url = await emptyDatabase();
    const script = `
      const { openPostgres } = await import(${sourceUrl('src/store/postgres.ts')});
      const database = await openPostgres(process.env.TEST_DATABASE_URL);
      console.log(JSON.stringify(database.appliedMigrations));
      await database.close();`;
    const runs = await Promise.all([1, 2].map(() => runScriptProcess(script, { env: { TEST_DATABASE_URL: url } })));
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
    const applied = runs.map((run) => JSON.parse(run.stdout) as string[]);
    expect(applied.flat().sort()).toEqual(allMigrations);
    const rows = await withClient(url, (client) => client.query<{ hash: string }>('SELECT hash FROM drizzle.__drizzle_migrations'));
    expect(rows.rowCount).toBe(allMigrations.length);
  });

  it('raises the revisions by trigger on every write, as SQLite does', async () => {
    const database = await openPostgres(await (await sharedPostgresServer()).createDatabase({ migrated: true }));
    const { pool } = database;
    // A collection's revision is the sum of its slots; each connection raises a slot of its own.
    const collectionRevision = async () =>
      (await pool.query<{ revision: string | null }>("SELECT sum(revision) AS revision FROM collection_revisions WHERE workspace_id = 'ten_w' AND collection = 'tasks'")).rows[0]
        ?.revision;
    const portfolioRevision = async () => (await pool.query<{ revision: number }>("SELECT revision FROM portfolios WHERE tenant_id = 'ten_p'")).rows[0]?.revision;
    const writer = await pool.connect();
    try {
      await writer.query("INSERT INTO workspaces (id, name, plan, created_at) VALUES ('ten_w', 'W', 'free', 1)");
      await writer.query("INSERT INTO projects (id, workspace_id, name, status, version, created_at, updated_at) VALUES ('prj_1', 'ten_w', 'P', 'ACTIVE', 1, 1, 1)");
      expect(await collectionRevision()).toBeNull();
      await writer.query(
        "INSERT INTO tasks (id, workspace_id, project_id, title, status, priority, priority_rank, version, created_at, updated_at) VALUES ('tsk_1', 'ten_w', 'prj_1', 'T', 'TODO', 'LOW', 1, 1, 1, 1)",
      );
      const first = Number(await collectionRevision());
      expect(first).toBeGreaterThanOrEqual(1);
      expect(first).toBeLessThanOrEqual(2 ** 40);
      await writer.query("UPDATE tasks SET title = 'T2' WHERE id = 'tsk_1'");
      expect(Number(await collectionRevision())).toBe(first + 1);
      // One statement writing several rows raises the revision once.
      await writer.query(
        "INSERT INTO tasks (id, workspace_id, project_id, title, status, priority, priority_rank, version, created_at, updated_at) VALUES ('tsk_2', 'ten_w', 'prj_1', 'T', 'TODO', 'LOW', 1, 1, 1, 1), ('tsk_3', 'ten_w', 'prj_1', 'T', 'TODO', 'LOW', 1, 1, 1, 1)",
      );
      expect(Number(await collectionRevision())).toBe(first + 2);
      await writer.query("DELETE FROM tasks WHERE workspace_id = 'ten_w'");
      expect(Number(await collectionRevision())).toBe(first + 3);
      // A statement that writes no row leaves it alone.
      await writer.query("UPDATE tasks SET title = 'T3' WHERE id = 'tsk_none'");
      expect(Number(await collectionRevision())).toBe(first + 3);
      // Deleting the workspace cascades to its projects; their triggers find no workspace to count for.
      await writer.query("DELETE FROM workspaces WHERE id = 'ten_w'");
      expect((await pool.query('SELECT * FROM collection_revisions')).rowCount).toBe(0);

      await pool.query("INSERT INTO tenants (id, name, created_at) VALUES ('ten_p', 'P', 1)");
      await pool.query(
        "INSERT INTO portfolios (tenant_id, published, profile_source_json, profile_rendered_json, document_json, updated_at) VALUES ('ten_p', 1, '{}', '{}', '{}', 1)",
      );
      expect(await portfolioRevision()).toBe(0);
      await pool.query("UPDATE portfolios SET updated_at = 2 WHERE tenant_id = 'ten_p'");
      expect(await portfolioRevision()).toBe(1);
      // A writer that sets the revision itself keeps its value.
      await pool.query("UPDATE portfolios SET revision = 10 WHERE tenant_id = 'ten_p'");
      expect(await portfolioRevision()).toBe(10);
      await pool.query(
        "INSERT INTO portfolio_items (tenant_id, kind, position, slug, published, source_json, rendered_json) VALUES ('ten_p', 'post', 0, 'hello', 1, '{}', '{}')",
      );
      expect(await portfolioRevision()).toBe(11);
      await pool.query("INSERT INTO assets (tenant_id, id, position, url, alt_text, mime_type) VALUES ('ten_p', 'ast_1', 0, 'https://x.example/a.png', 'a', 'image/png')");
      expect(await portfolioRevision()).toBe(12);
      await pool.query("DELETE FROM portfolio_items WHERE tenant_id = 'ten_p'");
      expect(await portfolioRevision()).toBe(13);
      await pool.query("DELETE FROM tenants WHERE id = 'ten_p'");
      expect((await pool.query('SELECT * FROM assets')).rowCount).toBe(0);
    } finally {
      writer.release();
      await database.close();
    }
  });

  it('lets two SERIALIZABLE transactions write tasks of one workspace at once: each raises its own slot', async () => {
    const database = await openPostgres(await (await sharedPostgresServer()).createDatabase({ migrated: true }));
    const [first, second] = [await database.pool.connect(), await database.pool.connect()];
    // A connection's slot is numbered at its first write, one after another.
    const slotOf = async (client: pg.PoolClient) => Number((await client.query("SELECT current_setting('contract_api.revision_slot') AS slot")).rows[0].slot);
    const insertTask = (client: typeof first, id: string) =>
      client.query(
        `INSERT INTO tasks (id, workspace_id, project_id, title, status, priority, priority_rank, version, created_at, updated_at) VALUES ('${id}', 'ten_w', 'prj_1', 'T', 'TODO', 'LOW', 1, 1, 1, 1)`,
      );
    try {
      await first.query("INSERT INTO workspaces (id, name, plan, created_at) VALUES ('ten_w', 'W', 'free', 1)");
      await first.query("INSERT INTO projects (id, workspace_id, name, status, version, created_at, updated_at) VALUES ('prj_1', 'ten_w', 'P', 'ACTIVE', 1, 1, 1)");
      // Each connection's slot exists before the race, as it does on a server that has written before.
      await insertTask(first, 'tsk_a0');
      await insertTask(second, 'tsk_b0');
      expect(await slotOf(second)).toBe(((await slotOf(first)) + 1) % 64);
      const before = Number((await first.query("SELECT sum(revision) AS revision FROM collection_revisions WHERE workspace_id = 'ten_w' AND collection = 'tasks'")).rows[0].revision);

      await first.query('BEGIN ISOLATION LEVEL SERIALIZABLE');
      await second.query('BEGIN ISOLATION LEVEL SERIALIZABLE');
      await insertTask(first, 'tsk_a1');
      // With one row per collection this insert waited for the first transaction and then failed:
      // "could not serialize access due to concurrent update".
      const secondInsert = insertTask(second, 'tsk_b1');
      await first.query('COMMIT');
      await secondInsert;
      await second.query('COMMIT');

      const after = Number((await first.query("SELECT sum(revision) AS revision FROM collection_revisions WHERE workspace_id = 'ten_w' AND collection = 'tasks'")).rows[0].revision);
      expect(after).toBe(before + 2);
      expect((await first.query("SELECT count(*)::int AS n FROM tasks WHERE workspace_id = 'ten_w'")).rows[0].n).toBe(4);
    } finally {
      first.release();
      second.release();
      await database.close();
    }
  });

  it('refuses a database whose revision triggers a migration dropped, naming them', async () => {
    const url = await (await sharedPostgresServer()).createDatabase({ migrated: true });
    await withClient(url, (client) => client.query('DROP TRIGGER tasks_update_revision ON tasks'));
    await expect(openPostgres(url)).rejects.toThrow(/lacks the triggers tasks_update_revision: .*0001_revision_triggers\.sql/);
  });

  it('refuses a database that sorts text by a language (ICU en-US) rather than by code point, saying how to create one', async () => {
    const server = await sharedPostgresServer();
    const name = `collation_${Date.now()}`;
    await withClient(server.url, (client) =>
      client.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'`),
    );
    await expect(openPostgres(databaseUrl(server.url, name))).rejects.toThrow(
      `The database ${name} sorts text by the collation ICU en-US; the API sorts by code point. Create the database with: CREATE DATABASE ${name} TEMPLATE template0`,
    );
  });

  it('sizes the pool and sets the statement timeout as asked, and reads bigint columns as numbers', async () => {
    const database = await openPostgres(await (await sharedPostgresServer()).createDatabase({ migrated: true }), { poolMax: 3, statementTimeoutMs: 1500 });
    try {
      expect(database.pool.options.max).toBe(3);
      expect((await database.pool.query('SHOW statement_timeout')).rows[0]).toEqual({ statement_timeout: '1500ms' });
      await expect(database.pool.query('SELECT pg_sleep(3)')).rejects.toThrow(/statement timeout/);
      await database.pool.query("INSERT INTO tenants (id, name, created_at) VALUES ('ten_t', 'T', 1795670317365)");
      expect((await database.pool.query('SELECT created_at FROM tenants')).rows[0]).toEqual({ created_at: 1795670317365 });
      const [tenant] = await database.orm.select().from(postgresSchema.tenants);
      expect(tenant).toEqual({ id: 'ten_t', name: 'T', createdAt: 1795670317365 });
    } finally {
      await database.close();
    }
  });
});
