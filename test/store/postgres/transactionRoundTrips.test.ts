// What a write transaction sends PostgreSQL: nested changes first run without savepoints, its BEGIN
// rides before the first statement (its NOTIFYs go on the pool once the COMMIT is confirmed, see
// announceCommit.test.ts); a nested change that fails
// after its statements ran, and whose caller goes on, makes the transaction run again with
// savepoints (which ride with the next statement or the COMMIT, one simple query each time; a
// savepoint no statement ran in is never sent), so that it undoes exactly its own statements.
import { sql } from 'drizzle-orm';
import type pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { tenants } from '../../../db/schema.js';
import { postgresEngine, type StoreEngine } from '../../../src/store/engine.js';
import { openPostgres } from '../../../src/store/postgres.js';
import { sharedPostgresServer } from '../../support/postgresServer.js';

const closing: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** An engine whose every round trip on a pooled connection is recorded (its text, or the prepared statement's). */
async function recordedEngine(): Promise<{ engine: StoreEngine; sent: string[] }> {
  const url = await (await sharedPostgresServer()).createDatabase({ migrated: true });
  const { pool } = await openPostgres(url, { poolMax: 2 });
  const sent: string[] = [];
  const wrapped = new WeakSet<pg.PoolClient>();
  pool.on('acquire', (client) => {
    if (wrapped.has(client)) return;
    wrapped.add(client);
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const [first] = args;
      sent.push(typeof first === 'string' ? first : ((first as { text: string }).text.startsWith('insert') ? 'insert' : 'select'));
      return query(...args);
    };
  });
  const engine = postgresEngine(pool);
  closing.push(() => engine.close());
  return { engine, sent };
}

describe('write transactions on PostgreSQL', () => {
  it('sends two nested changes of one statement each in four round trips, not nine', async () => {
    const { engine, sent } = await recordedEngine();
    const insert = engine.statement(engine.orm.insert(tenants).values({ id: sql.placeholder('id'), name: 'T', createdAt: 1 }));
    await engine.write(async () => {
      await engine.write(() => insert.run({ id: 'ten_1' }));
      await engine.write(async () => undefined);
      await engine.write(() => insert.run({ id: 'ten_2' }));
    });
    expect(sent).toEqual(['BEGIN ISOLATION LEVEL SERIALIZABLE', 'insert', 'insert', 'COMMIT']);
    const count = engine.statement(engine.orm.select({ count: sql<number>`count(*)::int` }).from(tenants));
    expect(await count.value({})).toBe(2);
  });

  it('lets a failing nested change end its whole transaction without any savepoint', async () => {
    const { engine, sent } = await recordedEngine();
    const insert = engine.statement(engine.orm.insert(tenants).values({ id: sql.placeholder('id'), name: 'T', createdAt: 1 }));
    await expect(
      engine.write(async () => {
        await insert.run({ id: 'ten_gone' });
        await engine.write(async () => {
          await insert.run({ id: 'ten_gone_too' });
          throw new Error('refused');
        });
      }),
    ).rejects.toThrow('refused');
    expect(sent).toEqual(['BEGIN ISOLATION LEVEL SERIALIZABLE', 'insert', 'insert', 'ROLLBACK']);
    const count = engine.statement(engine.orm.select({ count: sql<number>`count(*)::int` }).from(tenants));
    expect(await count.value({})).toBe(0);
  });

  it('undoes only the statements of a nested change that fails, and sends nothing for a transaction that ran none', async () => {
    const { engine, sent } = await recordedEngine();
    const insert = engine.statement(engine.orm.insert(tenants).values({ id: sql.placeholder('id'), name: 'T', createdAt: 1 }));
    await engine.write(async () => undefined);
    await expect(engine.write(async () => Promise.reject(new Error('refused before any statement')))).rejects.toThrow('refused');
    expect(sent).toEqual([]);
    await engine.write(async () => {
      await insert.run({ id: 'ten_kept' });
      await expect(
        engine.write(async () => {
          await insert.run({ id: 'ten_undone' });
          throw new Error('undo me');
        }),
      ).rejects.toThrow('undo me');
      await expect(engine.write(async () => Promise.reject(new Error('nothing ran')))).rejects.toThrow('nothing ran');
      await insert.run({ id: 'ten_after' });
    });
    const ids = engine.statement<{ id: string }>(engine.orm.select({ id: tenants.id }).from(tenants));
    expect((await ids.objects({})).map((row) => row.id).sort()).toEqual(['ten_after', 'ten_kept']);
    expect(sent).toEqual([
      // The first run, without savepoints: the caller went on after the nested change failed, and its next statement is not sent.
      'BEGIN ISOLATION LEVEL SERIALIZABLE',
      'insert',
      'insert',
      'ROLLBACK',
      // Run again at once, with savepoints.
      'BEGIN ISOLATION LEVEL SERIALIZABLE',
      'insert',
      'SAVEPOINT nested_change_1',
      'insert',
      'ROLLBACK TO SAVEPOINT nested_change_1; RELEASE SAVEPOINT nested_change_1',
      // The change that failed before any statement: its savepoint was never sent.
      'insert',
      'COMMIT',
      'select',
    ]);
  });
});
