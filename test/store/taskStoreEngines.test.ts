// The task and project stores' behaviour on both engines: what a store does on SQLite it does on
// PostgreSQL, through the same code (src/store/engine.ts).
import { sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { events, users, workspaces } from '../../db/schema.js';
import type { StoreEngine } from '../../src/store/engine.js';
import { createProjectStore } from '../../src/store/projects.js';
import { createTaskStore, taskSorts, type TaskStore } from '../../src/store/tasks.js';
import { NotFoundError, ProjectHasTasksError, StorageLimitError, VersionConflictError } from '../../src/store/workPlatformErrors.js';
import { storeEngines, type OpenedEngine } from '../support/engines.js';

const actor = { id: 'usr_owner', kind: 'USER' } as const;

async function seedWorkspace(engine: StoreEngine, id: string): Promise<void> {
  await engine.write(async () => {
    await engine.statement(engine.orm.insert(workspaces).values({ id, name: id, plan: 'free', createdAt: 1 })).run({});
    await engine.statement(engine.orm.insert(users).values({ id: `${id}_owner`, workspaceId: id, role: 'owner', createdAt: 1 })).run({});
  });
}

describe.each(storeEngines)('task and project stores on $name', (engineCase) => {
  let opened: OpenedEngine;
  let engine: StoreEngine;
  let tasks: TaskStore;
  let projectId: string;
  let at: number;

  beforeEach(async () => {
    opened = await engineCase.open({ retryDelayMs: () => 0 });
    engine = opened.engine;
    at = Date.UTC(2026, 10, 23, 9, 41);
    const now = () => (at += 1000);
    await seedWorkspace(engine, 'ten_main');
    await seedWorkspace(engine, 'ten_other');
    projectId = (await createProjectStore(engine, { now }).createProject('ten_main', { name: 'Main' }, actor)).id;
    tasks = createTaskStore(engine, { now });
  });
  afterEach(() => opened.close());

  it('creates, reads, updates with If-Match and deletes a task, recording one event per change in the same transaction', async () => {
    const task = await tasks.createTask('ten_main', { projectId, title: 'Write it', assigneeId: 'ten_main_owner', dueOn: '2026-12-01T00:00:00.000Z' }, actor);
    expect(await tasks.getTask('ten_main', task.id)).toEqual(task);
    expect(await tasks.getTask('ten_other', task.id)).toBeUndefined();
    const done = await tasks.updateTask('ten_main', task.id, { status: 'DONE' }, 1, actor);
    expect(done).toMatchObject({ version: 2, status: 'DONE', completedAt: done.updatedAt });
    await expect(tasks.updateTask('ten_main', task.id, { title: 'Stale' }, 1, actor)).rejects.toBeInstanceOf(VersionConflictError);
    await expect(tasks.createTask('ten_main', { projectId, title: 'x'.repeat(501) }, actor)).rejects.toBeInstanceOf(StorageLimitError);
    await expect(tasks.createTask('ten_main', { projectId: 'prj_missing', title: 'Lost' }, actor)).rejects.toBeInstanceOf(NotFoundError);
    await expect(createProjectStore(engine).deleteProject('ten_main', projectId, null, actor)).rejects.toBeInstanceOf(ProjectHasTasksError);
    await tasks.deleteTask('ten_main', task.id, 2, actor);
    const types = await engine.statement<{ type: string }>(engine.orm.select({ type: events.type }).from(events).orderBy(events.occurredAt, events.type)).objects({});
    expect(types.map((row) => row.type)).toEqual(['project.created', 'task.created', 'task.completed', 'task.updated', 'task.deleted']);
  });

  it.each(taskSorts)('pages through every task exactly once sorted by %s, both ways', async (sort) => {
    const titles = ['b', 'A', 'a', 'Z', 'é', 'b'];
    const priorities = ['LOW', 'HIGH', 'MEDIUM'] as const;
    for (const [index, title] of titles.entries()) {
      await tasks.createTask(
        'ten_main',
        { projectId, title, priority: priorities[index % 3], dueOn: index % 2 === 0 ? null : `2026-12-0${index}T00:00:00.000Z` },
        actor,
      );
    }
    for (const order of ['asc', 'desc'] as const) {
      const seen: string[] = [];
      let after: { key: string | number; id: string } | null = null;
      do {
        const page: Awaited<ReturnType<TaskStore['listTasks']>> = await tasks.listTasks('ten_main', { sort, order, limit: 2, after });
        seen.push(...page.items.map((item) => item.id));
        after = page.nextAfter;
      } while (after);
      expect(new Set(seen).size).toBe(titles.length);
      expect(seen).toHaveLength(titles.length);
    }
  });

  it('orders text by code point on both engines (PostgreSQL compares with the C collation as SQLite does)', async () => {
    for (const title of ['b', 'B', 'a', 'é', 'Z']) await tasks.createTask('ten_main', { projectId, title }, actor);
    const page = await tasks.listTasks('ten_main', { sort: 'title', order: 'asc', limit: 10, after: null });
    expect(page.items.map((item) => item.title)).toEqual(['B', 'Z', 'a', 'b', 'é']);
  });

  it('keeps If-Match exact when two instances change the same task at once: one wins, the other gets a version conflict', async () => {
    const other = engineCase.name === 'PostgreSQL' ? createTaskStore(await opened.openAnother()) : createTaskStore(engine);
    const task = await tasks.createTask('ten_main', { projectId, title: 'Contended' }, actor);
    const results = await Promise.allSettled([
      tasks.updateTask('ten_main', task.id, { title: 'First' }, 1, actor),
      other.updateTask('ten_main', task.id, { title: 'Second' }, 1, actor),
    ]);
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((result) => result.status === 'rejected');
    expect((rejected as PromiseRejectedResult).reason).toBeInstanceOf(VersionConflictError);
    expect((await tasks.getTask('ten_main', task.id))!.version).toBe(2);
  });

  it('leaves the counting expressions of both dialects agreeing', async () => {
    expect(await engine.statement(engine.orm.select({ v: engine.dialect.greatest(sql`3`, sql`7`) }).from(workspaces).limit(1)).value({})).toBe(7);
    expect(await engine.statement(engine.orm.select({ v: engine.dialect.utcMonth(sql`cast(${Date.UTC(2026, 1, 28, 23, 59)} as bigint)`) }).from(workspaces).limit(1)).value({})).toBe(
      '2026-02',
    );
  });
});
