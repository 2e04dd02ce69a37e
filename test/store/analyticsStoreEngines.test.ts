// The analytics, project open work, AI spend and connector stores on both engines: the same numbers
// from the same rows, the spend cap exact under two instances at once, connector changes with If-Match.
import { sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deals, events, tasks, users, workspaces } from '../../db/schema.js';
import { retryWhileBusy } from '../../src/store/busyWrites.js';
import { createAiSpendStore, type AiSpendReservation } from '../../src/store/aiSpend.js';
import { bucketKey, bucketSizes, createAnalyticsStore, type AnalyticsStore, type BucketKey, type BucketSize } from '../../src/store/analytics.js';
import { connectorNameLimit, createConnectorStore, type ConnectorStore } from '../../src/store/connectors.js';
import type { StoreEngine } from '../../src/store/engine.js';
import { createProjectOpenWorkReader } from '../../src/store/projectOpenWork.js';
import { createProjectStore } from '../../src/store/projects.js';
import { priorityRank, type TaskPriority, type TaskStatus } from '../../src/store/tasks.js';
import { StorageLimitError, VersionConflictError } from '../../src/store/workPlatformErrors.js';
import { storeEngines, type OpenedEngine } from '../support/engines.js';

const actor = { id: 'ten_main_owner', kind: 'USER' } as const;
const day = 86_400_000;
/** 2026: Mondays on 23 February, 2, 9 and 16 March. */
const at = (month: number, date: number, hour = 0) => Date.UTC(2026, month - 1, date, hour);
const from = at(2, 23);
const to = at(3, 16);
const now = at(3, 14, 12);

async function seedWorkspace(engine: StoreEngine, id: string): Promise<void> {
  await engine.write(async () => {
    await engine.statement(engine.orm.insert(workspaces).values({ id, name: id, plan: 'free', createdAt: 1 })).run({});
    await engine.statement(engine.orm.insert(users).values({ id: `${id}_owner`, workspaceId: id, role: 'owner', createdAt: 1 })).run({});
  });
}

interface SeededTask {
  id: string;
  projectId: string;
  status: TaskStatus;
  priority: TaskPriority;
  createdAt: number;
  completedAt: number | null;
  dueOn: number | null;
}

async function seedTask(engine: StoreEngine, workspaceId: string, task: SeededTask): Promise<void> {
  const row = { ...task, workspaceId, title: task.id, priorityRank: priorityRank(task.priority), assigneeId: null, version: 1, updatedAt: task.completedAt ?? task.createdAt };
  await engine.write(() => engine.statement(engine.orm.insert(tasks).values(row)).run({}));
}

async function seedDeal(engine: StoreEngine, id: string, values: { stage: 'lead' | 'qualified'; currency: string; amountMinor: number; ownerId: string; createdAt: number }) {
  const row = { ...values, id, workspaceId: 'ten_main', title: id, companyId: null, contactIds: '[]', expectedCloseOn: null, version: 1, updatedAt: values.createdAt };
  await engine.write(() => engine.statement(engine.orm.insert(deals).values(row)).run({}));
}

/** What a grouped count answers: how many of the instants fall in each bucket. */
function countedByBucket(size: BucketSize, instants: number[]): Map<BucketKey, number> {
  const counts = new Map<BucketKey, number>();
  for (const instant of instants) counts.set(bucketKey(size, instant), (counts.get(bucketKey(size, instant)) ?? 0) + 1);
  return counts;
}

describe.each(storeEngines)('analytics, open work, AI spend and connector stores on $name', (engineCase) => {
  let opened: OpenedEngine;
  let engine: StoreEngine;

  beforeEach(async () => {
    opened = await engineCase.open();
    engine = opened.engine;
    await seedWorkspace(engine, 'ten_main');
    await seedWorkspace(engine, 'ten_other');
  });
  afterEach(() => opened.close());

  describe('over seeded tasks and deals', () => {
    let analytics: AnalyticsStore;
    let projectA: string;
    let projectB: string;

    beforeEach(async () => {
      const projects = createProjectStore(engine, { now: () => at(1, 1) });
      projectA = (await projects.createProject('ten_main', { name: 'A' }, actor)).id;
      projectB = (await projects.createProject('ten_main', { name: 'B' }, actor)).id;
      const otherProject = (await projects.createProject('ten_other', { name: 'Other' }, actor)).id;
      const done = (id: string, createdAt: number, completedAt: number, dueOn: number | null = null): SeededTask => ({
        id,
        projectId: projectA,
        status: 'DONE',
        priority: 'MEDIUM',
        createdAt,
        completedAt,
        dueOn,
      });
      for (const task of [
        done('tsk_week1', at(2, 24, 10), at(3, 2, 10)), // 6 days
        done('tsk_sunday', at(2, 27, 12), at(3, 1, 12)), // 2 days, completed on the Sunday that ends the first week
        done('tsk_instant', at(3, 2), at(3, 2) + 1), // 1 ms
        done('tsk_late', at(2, 1), at(3, 3), at(2, 20)), // 30 days; overdue from before the range until 3 March
        done('tsk_old', at(2, 1), at(2, 15), at(2, 10)), // overdue and done before the range
        { id: 'tsk_dueBeforeCreated', projectId: projectB, status: 'TODO', priority: 'MEDIUM', createdAt: at(3, 10), completedAt: null, dueOn: at(3, 5) },
        { id: 'tsk_urgent', projectId: projectA, status: 'IN_PROGRESS', priority: 'HIGH', createdAt: at(3, 11), completedAt: null, dueOn: at(3, 12) },
        { id: 'tsk_someday', projectId: projectA, status: 'TODO', priority: 'LOW', createdAt: at(3, 12), completedAt: null, dueOn: null },
      ] satisfies SeededTask[]) {
        await seedTask(engine, 'ten_main', task);
      }
      await seedTask(engine, 'ten_other', { ...done('tsk_elsewhere', at(3, 2), at(3, 3), at(3, 2, 12)), projectId: otherProject });
      analytics = createAnalyticsStore(engine);
    });

    it.each(bucketSizes)('counts the tasks created and completed per %s bucket, only in the workspace and project asked', async (bucket) => {
      const range = { workspaceId: 'ten_main', from, to, bucket };
      const createdInRange = [at(2, 24, 10), at(2, 27, 12), at(3, 2), at(3, 11), at(3, 12)];
      expect(await analytics.tasksCreated(range, undefined)).toEqual(countedByBucket(bucket, [...createdInRange, at(3, 10)]));
      expect(await analytics.tasksCreated(range, projectA)).toEqual(countedByBucket(bucket, createdInRange));
      expect(await analytics.tasksCompleted(range, undefined)).toEqual(countedByBucket(bucket, [at(3, 2, 10), at(3, 1, 12), at(3, 2) + 1, at(3, 3)]));
      if (bucket === 'week') expect([...(await analytics.tasksCompleted(range, undefined)).values()].sort()).toEqual([1, 3]);
      if (bucket === 'month') expect(await analytics.tasksCreated(range, undefined)).toEqual(new Map([['2026-02', 2], ['2026-03', 4]]));
    });

    it('answers cycle-time statistics as numbers: a mean that is not whole, nearest-rank median and p90, per week and overall', async () => {
      const { overall, perBucket } = await analytics.cycleTimes({ workspaceId: 'ten_main', from, to, bucket: 'week' }, undefined);
      expect(overall).toEqual({ completed: 4, meanMs: (38 * day + 1) / 4, medianMs: 2 * day, p90Ms: 30 * day, maxMs: 30 * day });
      expect(perBucket).toEqual(
        new Map([
          [bucketKey('week', at(2, 23)), { completed: 1, meanMs: 2 * day, medianMs: 2 * day, p90Ms: 2 * day, maxMs: 2 * day }],
          [bucketKey('week', at(3, 2)), { completed: 3, meanMs: (36 * day + 1) / 3, medianMs: 6 * day, p90Ms: 30 * day, maxMs: 30 * day }],
        ]),
      );
      const byMonth = await analytics.cycleTimes({ workspaceId: 'ten_main', from, to, bucket: 'month' }, undefined);
      expect(byMonth.perBucket).toEqual(new Map([['2026-03', overall]]));
      const none = await analytics.cycleTimes({ workspaceId: 'ten_main', from, to, bucket: 'day' }, projectB);
      expect(none).toEqual({ overall: { completed: 0, meanMs: null, medianMs: null, p90Ms: null, maxMs: null }, perBucket: new Map() });
    });

    it.each(bucketSizes)('counts overdue tasks now, before the range, and started and ended per %s bucket', async (bucket) => {
      const range = { workspaceId: 'ten_main', from, to, bucket };
      expect(await analytics.overdue(range, undefined, now)).toEqual({
        current: { LOW: 0, MEDIUM: 1, HIGH: 1 },
        beforeRange: { started: 2, ended: 1 },
        // Overdue from the later of creation and due date.
        started: countedByBucket(bucket, [at(3, 10), at(3, 12)]),
        ended: countedByBucket(bucket, [at(3, 3)]),
      });
      expect(await analytics.overdue(range, projectA, now)).toMatchObject({ current: { LOW: 0, MEDIUM: 0, HIGH: 1 }, started: countedByBucket(bucket, [at(3, 12)]) });
    });

    it('sums deal amounts exactly per bucket, stage and currency, past what a double holds', async () => {
      await engine.write(() => engine.statement(engine.orm.insert(users).values({ id: 'ten_main_member', workspaceId: 'ten_main', role: 'member', createdAt: 1 })).run({}));
      await seedDeal(engine, 'del_big1', { stage: 'lead', currency: 'EUR', amountMinor: 6_000_000_000_000_001, ownerId: 'ten_main_owner', createdAt: at(2, 24) });
      await seedDeal(engine, 'del_big2', { stage: 'lead', currency: 'EUR', amountMinor: 6_000_000_000_000_002, ownerId: 'ten_main_owner', createdAt: at(2, 25) });
      await seedDeal(engine, 'del_usd', { stage: 'qualified', currency: 'USD', amountMinor: 100, ownerId: 'ten_main_owner', createdAt: at(3, 3) });
      await seedDeal(engine, 'del_member', { stage: 'lead', currency: 'EUR', amountMinor: 7, ownerId: 'ten_main_member', createdAt: at(3, 4) });
      const rows = await analytics.pipeline({ workspaceId: 'ten_main', from, to, bucket: 'week' }, undefined);
      const sorted = rows.sort((a, b) => Number(a.key) - Number(b.key) || a.stage.localeCompare(b.stage));
      expect(sorted).toEqual([
        { key: bucketKey('week', at(2, 23)), stage: 'lead', currency: 'EUR', deals: 2, amountMinor: 12_000_000_000_000_003n },
        { key: bucketKey('week', at(3, 2)), stage: 'lead', currency: 'EUR', deals: 1, amountMinor: 7n },
        { key: bucketKey('week', at(3, 2)), stage: 'qualified', currency: 'USD', deals: 1, amountMinor: 100n },
      ]);
      const owned = await analytics.pipeline({ workspaceId: 'ten_main', from, to, bucket: 'month' }, 'ten_main_owner');
      expect(owned.map((row) => [row.key, row.stage, row.deals])).toEqual(expect.arrayContaining([['2026-02', 'lead', 2], ['2026-03', 'qualified', 1]]));
      expect(owned).toHaveLength(2);
      expect(await analytics.hasUser('ten_main', 'ten_main_member')).toBe(true);
      expect(await analytics.hasUser('ten_other', 'ten_main_member')).toBe(false);
      expect(await analytics.hasProject('ten_main', projectA)).toBe(true);
      expect(await analytics.hasProject('ten_other', projectA)).toBe(false);
    });

    it("reads a project's open work: counts by status and priority, the overdue ones, the most urgent first", async () => {
      const reader = createProjectOpenWorkReader(engine);
      const work = await reader.openWorkOfProject('ten_main', projectA, { now, limit: 10 });
      expect(work).toMatchObject({
        openTaskCount: 2,
        overdueTaskCount: 1,
        countsByStatus: { TODO: 1, IN_PROGRESS: 1, BLOCKED: 0 },
        countsByPriority: { LOW: 1, MEDIUM: 0, HIGH: 1 },
      });
      expect(work.mostUrgent.map((task) => task.id)).toEqual(['tsk_urgent', 'tsk_someday']);
      expect(work.mostUrgent[0]).toMatchObject({ dueOn: new Date(at(3, 12)).toISOString(), completedAt: null, version: 1 });
      expect((await reader.openWorkOfProject('ten_main', projectA, { now, limit: 1 })).mostUrgent).toHaveLength(1);
      expect(await reader.openWorkOfProject('ten_other', projectA, { now, limit: 10 })).toMatchObject({ openTaskCount: 0, mostUrgent: [] });
    });
  });

  it('keeps the daily AI spend cap exact when two instances reserve at once', async () => {
    // SQLite: one process's connection (its transactions take turns); two processes on one file are test/store/aiSpend.test.ts's.
    const other = engineCase.name === 'PostgreSQL' ? await opened.openAnother() : engine;
    const stores = [createAiSpendStore(engine, { now: () => now }), createAiSpendStore(other, { now: () => now })];
    const reservation: AiSpendReservation = {
      workspaceId: 'ten_main',
      day: '2026-03-14',
      operation: 'draftTasks',
      model: 'test-model',
      requestId: 'req_1',
      reservedMillicents: 400,
      capMillicents: 1000,
    };
    const results = await Promise.all(Array.from({ length: 6 }, (_, index) => retryWhileBusy(() => stores[index % 2]!.reserve(reservation))));
    const reserved = results.filter((result) => result.reserved);
    expect(reserved).toHaveLength(2);
    expect(results.filter((result) => !result.reserved).every((result) => result.spentMillicents === 800)).toBe(true);
    expect(await stores[1]!.spentOnDay('ten_main', '2026-03-14')).toBe(800);
    const [first, second] = reserved as { entryId: string }[];
    await stores[1]!.settle(first!.entryId, { actualMillicents: 123, promptTokens: 10, completionTokens: 5 });
    await stores[0]!.release(second!.entryId);
    await expect(stores[0]!.settle(first!.entryId, { actualMillicents: 1, promptTokens: 1, completionTokens: 1 })).rejects.toThrow(/not an open reservation/);
    expect(await stores[0]!.spentOnDay('ten_main', '2026-03-14')).toBe(123);
    expect(await stores[0]!.spentOnDay('ten_other', '2026-03-14')).toBe(0);
  });

  describe('connectors', () => {
    let connectors: ConnectorStore;
    let clock: number;
    const credential = { sealed: 'sealed-1', hint: 'abcd', expiresAt: null, accountLogin: 'octocat' };

    beforeEach(() => {
      clock = now;
      connectors = createConnectorStore(engine, { now: () => (clock += 1000) });
    });

    it('creates, reads, lists both ways, connects, refuses a stale If-Match and deletes, recording each event', async () => {
      const created = [];
      for (const name of ['Gamma', 'alpha', 'Beta']) created.push(await connectors.createConnector('ten_main', { kind: 'github', name }, actor));
      await connectors.createConnector('ten_other', { kind: 'github', name: 'Elsewhere' }, actor);
      const [gamma] = created;
      expect(await connectors.getConnector('ten_main', gamma!.id)).toEqual(gamma);
      expect(await connectors.getConnector('ten_other', gamma!.id)).toBeUndefined();
      await expect(connectors.createConnector('ten_main', { kind: 'github', name: 'x'.repeat(connectorNameLimit + 1) }, actor)).rejects.toBeInstanceOf(StorageLimitError);

      for (const order of ['asc', 'desc'] as const) {
        const names: string[] = [];
        let after: { key: string | number; id: string } | null = null;
        do {
          const page: Awaited<ReturnType<ConnectorStore['listConnectors']>> = await connectors.listConnectors('ten_main', { sort: 'name', order, limit: 2, after, kind: 'github' });
          names.push(...page.items.map((item) => item.name));
          after = page.nextAfter;
        } while (after);
        // Code-point order on both engines.
        expect(names).toEqual(order === 'asc' ? ['Beta', 'Gamma', 'alpha'] : ['alpha', 'Gamma', 'Beta']);
      }
      const updatedSince = Date.parse(created[1]!.updatedAt);
      const recent = await connectors.listConnectors('ten_main', { sort: 'createdAt', order: 'asc', limit: 10, after: null, updatedSince });
      expect(recent.items.map((item) => item.name)).toEqual(['alpha', 'Beta']);

      const connected = await connectors.connect('ten_main', gamma!.id, credential, actor);
      expect(connected).toMatchObject({ status: 'connected', version: 2, credentialHint: '…abcd', accountLogin: 'octocat' });
      expect(await connectors.getConnectorWithCredential('ten_main', gamma!.id)).toEqual({ connector: connected, sealedCredential: 'sealed-1' });
      await expect(connectors.deleteConnector('ten_main', gamma!.id, 1, actor)).rejects.toBeInstanceOf(VersionConflictError);
      // A credential replaced meanwhile is left alone.
      expect(await connectors.markExpired('ten_main', gamma!.id, 'sealed-older', actor)).toEqual(connected);
      await connectors.deleteConnector('ten_main', gamma!.id, 2, actor);
      expect(await connectors.getConnector('ten_main', gamma!.id)).toBeUndefined();

      const types = await engine
        .statement<{ type: string }>(engine.orm.select({ type: events.type }).from(events).where(sql`${events.type} like 'connector.%'`).orderBy(events.occurredAt, events.type))
        .objects({});
      expect(types.map((row) => row.type)).toEqual(['connector.created', 'connector.created', 'connector.created', 'connector.created', 'connector.connected', 'connector.deleted']);
    });

    it('disconnects once when two instances disconnect the same connector at once', async () => {
      const other = engineCase.name === 'PostgreSQL' ? createConnectorStore(await opened.openAnother(), { now: () => (clock += 1000) }) : connectors;
      const connector = await connectors.createConnector('ten_main', { kind: 'github', name: 'Raced' }, actor);
      await connectors.connect('ten_main', connector.id, credential, actor);
      const results = await Promise.all([connectors.disconnect('ten_main', connector.id, actor), other.disconnect('ten_main', connector.id, actor)]);
      expect(results.map((result) => [result.status, result.version])).toEqual([
        ['disconnected', 3],
        ['disconnected', 3],
      ]);
      expect(await connectors.getConnectorWithCredential('ten_main', connector.id)).toMatchObject({ sealedCredential: null, connector: { version: 3, credentialHint: null } });
      const disconnections = await engine.statement(engine.orm.select({ type: events.type }).from(events).where(sql`${events.type} = 'connector.disconnected'`)).rows({});
      expect(disconnections).toHaveLength(1);
    });
  });
});
