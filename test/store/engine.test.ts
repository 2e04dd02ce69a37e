import { eq, sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tenants, webhookDeliveries } from '../../db/schema.js';
import { numberedParameters, postgresStatementText, type StoreEngine } from '../../src/store/engine.js';
import { storeEngines, type OpenedEngine } from '../support/engines.js';

describe('numberedParameters', () => {
  it('numbers the ? outside quoted text and identifiers', () => {
    expect(numberedParameters(`select "a?" from "t" where "x" = ? and "y" = 'it''s ?' and z = ?`)).toBe(
      `select "a?" from "t" where "x" = $1 and "y" = 'it''s ?' and z = $2`,
    );
  });
});

describe('postgresStatementText', () => {
  it("unqualifies an upsert's conflict target, which PostgreSQL refuses with the table's name", () => {
    expect(postgresStatementText(`insert into "t" ("a", "b") values (?, ?) on conflict ("t"."a", "t"."b") do update set "b" = excluded."b" where "t"."a" = ?`)).toBe(
      `insert into "t" ("a", "b") values ($1, $2) on conflict ("a", "b") do update set "b" = excluded."b" where "t"."a" = $3`,
    );
  });
});

describe.each(storeEngines)('the store engine on $name', (engineCase) => {
  let opened: OpenedEngine;
  let engine: StoreEngine;

  beforeEach(async () => {
    opened = await engineCase.open({ retryDelayMs: () => 0 });
    engine = opened.engine;
  });
  afterEach(() => opened.close());

  const insertTenant = (e: StoreEngine) =>
    e.statement(e.orm.insert(tenants).values({ id: sql.placeholder('id'), name: sql.placeholder('name'), createdAt: sql.placeholder('createdAt') }));
  const tenantById = (e: StoreEngine) => e.statement<typeof tenants.$inferSelect>(e.orm.select().from(tenants).where(eq(tenants.id, sql.placeholder('id'))));
  const tenantCount = (e: StoreEngine) => e.statement(e.orm.select({ count: sql<number>`count(*)` }).from(tenants));

  it('runs a statement, reads rows as arrays, as objects and as one value, and answers how many rows a change touched', async () => {
    const insert = insertTenant(engine);
    expect(await engine.write(() => insert.run({ id: 'ten_1', name: 'One', createdAt: 1_700_000_000_000 }))).toBe(1);
    const byId = tenantById(engine);
    expect(await byId.object({ id: 'ten_1' })).toEqual({ id: 'ten_1', name: 'One', createdAt: 1_700_000_000_000 });
    expect(await byId.row({ id: 'ten_1' })).toEqual(['ten_1', 'One', 1_700_000_000_000]);
    expect(await byId.object({ id: 'ten_2' })).toBeUndefined();
    expect(await tenantCount(engine).value({})).toBe(1);
    const rename = engine.statement(engine.orm.update(tenants).set({ name: 'Renamed' }).where(eq(tenants.id, sql.placeholder('id'))));
    expect(await engine.write(() => rename.run({ id: 'ten_1' }))).toBe(1);
    expect(await engine.write(() => rename.run({ id: 'ten_9' }))).toBe(0);
    const returning = engine.statement<{ name: string }>(engine.orm.delete(tenants).where(eq(tenants.id, sql.placeholder('id'))).returning({ name: tenants.name }));
    expect(await engine.write(() => returning.objects({ id: 'ten_1' }))).toEqual([{ name: 'Renamed' }]);
  });

  it('decodes columns as drizzle does (a boolean column reads true and false)', async () => {
    const count = engine.statement(engine.orm.select({ replay: sql`${webhookDeliveries.replay}`.mapWith(webhookDeliveries.replay) }).from(webhookDeliveries));
    expect(await count.objects({})).toEqual([]);
    const literal = engine.statement<{ yes: boolean; no: boolean }>(
      engine.orm.select({ yes: sql`1`.mapWith(webhookDeliveries.replay), no: sql`0`.mapWith(webhookDeliveries.replay) }).from(tenants).limit(1),
    );
    await engine.write(() => insertTenant(engine).run({ id: 'ten_1', name: 'One', createdAt: 1 }));
    expect(await literal.object({})).toEqual({ yes: true, no: false });
  });

  it('rolls back every statement of a change that throws', async () => {
    const insert = insertTenant(engine);
    await expect(
      engine.write(async () => {
        await insert.run({ id: 'ten_1', name: 'One', createdAt: 1 });
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await tenantCount(engine).value({})).toBe(0);
  });

  it('nests a change in the open one as a savepoint: a nested change that throws undoes only its own writes', async () => {
    const insert = insertTenant(engine);
    await engine.write(async () => {
      await insert.run({ id: 'ten_1', name: 'Kept', createdAt: 1 });
      await expect(
        engine.write(async () => {
          await insert.run({ id: 'ten_2', name: 'Undone', createdAt: 2 });
          throw new Error('nested failure');
        }),
      ).rejects.toThrow('nested failure');
      await engine.write(() => insert.run({ id: 'ten_3', name: 'Kept too', createdAt: 3 }));
    });
    const names = engine.statement<{ name: string }>(engine.orm.select({ name: tenants.name }).from(tenants).orderBy(tenants.id));
    expect(await names.objects({})).toEqual([{ name: 'Kept' }, { name: 'Kept too' }]);
  });

  it('runs afterCommit callbacks once the change has committed, where another instance sees it, and never after a rollback', async () => {
    const other = await opened.openAnother();
    let seenByOther: Promise<number> | undefined;
    await engine.write(async () => {
      await insertTenant(engine).run({ id: 'ten_1', name: 'One', createdAt: 1 });
      engine.afterCommit(() => {
        seenByOther = tenantCount(other).value({}).then(Number);
      });
      // Still inside the transaction: the callback has not run.
      await new Promise((wait) => setImmediate(wait));
      expect(seenByOther).toBeUndefined();
    });
    // Committed: the callback was queued for a later turn, before this one.
    await new Promise((wait) => setImmediate(wait));
    expect(await seenByOther).toBe(1);

    let ranAfterRollback = false;
    await expect(
      engine.write(async () => {
        engine.afterCommit(() => (ranAfterRollback = true));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    const outside = new Promise<boolean>((resolve) => engine.afterCommit(() => resolve(true)));
    expect(await outside).toBe(true);
    expect(ranAfterRollback).toBe(false);
  });

  it('refuses two changes at once inside one transaction', async () => {
    const insert = insertTenant(engine);
    await expect(
      engine.write(() =>
        Promise.all([
          engine.write(() => insert.run({ id: 'ten_1', name: 'A', createdAt: 1 })),
          engine.write(() => insert.run({ id: 'ten_2', name: 'B', createdAt: 2 })),
        ]),
      ),
    ).rejects.toThrow('two changes ran at once');
    expect(await tenantCount(engine).value({})).toBe(0);
  });

  it('refuses a statement of a change whose transaction has already ended, instead of running it outside', async () => {
    const insert = insertTenant(engine);
    let stray: Promise<number> | undefined;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    await engine.write(() => {
      stray = released.then(() => insert.run({ id: 'ten_late', name: 'Late', createdAt: 1 }));
    });
    release();
    await expect(stray).rejects.toThrow('has already ended');
    expect(await tenantCount(engine).value({})).toBe(0);
  });

  // Another instance committing in the middle of a snapshot exists on PostgreSQL only: on SQLite the
  // snapshot holds the file's write lock, and another connection of this process would block the thread.
  it.runIf(engineCase.name === 'PostgreSQL')('reads a snapshot: a change committed by another instance between two reads of it is not seen', async () => {
    await engine.write(() => insertTenant(engine).run({ id: 'ten_1', name: 'One', createdAt: 1 }));
    const other = await opened.openAnother();
    const counts = await engine.snapshot(async () => {
      const before = await tenantCount(engine).value({});
      await other.write(() => insertTenant(other).run({ id: 'ten_2', name: 'Two', createdAt: 2 }));
      return [before, await tenantCount(engine).value({})];
    });
    expect(counts).toEqual([1, 1]);
    expect(await tenantCount(engine).value({})).toBe(2);
  });

  it('runs a change that hits a unique key at most twice: a duplicate no race explains fails at once', async () => {
    await engine.write(() => insertTenant(engine).run({ id: 'ten_1', name: 'One', createdAt: 1 }));
    let runs = 0;
    await expect(
      engine.write(async () => {
        runs += 1;
        await insertTenant(engine).run({ id: 'ten_1', name: 'Again', createdAt: 2 });
      }),
    ).rejects.toThrow(/UNIQUE constraint failed|duplicate key value/);
    expect(runs).toBe(engineCase.name === 'PostgreSQL' ? 2 : 1);
  });

  it('loses no update when read-then-write changes run at once (on PostgreSQL from two instances)', async () => {
    const other = engineCase.name === 'PostgreSQL' ? await opened.openAnother() : engine;
    await engine.write(() => insertTenant(engine).run({ id: 'ten_counter', name: 'counter', createdAt: 0 }));
    // At most as many as the engine's attempts: each serialization failure means another change committed.
    const increments = 8;
    const increment = (e: StoreEngine) => {
      const read = tenantById(e);
      const set = e.statement(e.orm.update(tenants).set({ createdAt: sql`${sql.placeholder('value')}` }).where(eq(tenants.id, 'ten_counter')));
      return e.write(async () => {
        const current = (await read.object({ id: 'ten_counter' }))!;
        await set.run({ value: current.createdAt + 1 });
      });
    };
    await Promise.all(Array.from({ length: increments }, (_, index) => increment(index % 2 === 0 ? engine : other)));
    expect((await tenantById(engine).object({ id: 'ten_counter' }))!.createdAt).toBe(increments);
  });
});
