import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createProjectStore } from '../../src/store/projects.js';
import { backfillTaskCompletions, createTaskStore, priorityRank, taskSorts, type Task, type TaskSort, type TaskStore } from '../../src/store/tasks.js';
import { InvalidValueError, NotFoundError, StorageLimitError, VersionConflictError } from '../../src/store/workPlatformErrors.js';
import { makeClock, makeDatabase, queryPlanOf, recordPreparedStatements, type TempDatabase } from './factories.js';
import { openDatabase } from '../../src/store/database.js';
import { makeUser, makeWorkspace, type WorkspaceFixture } from './workPlatformFactories.js';

let t: TempDatabase;
let clock: ReturnType<typeof makeClock>;
let workspace: WorkspaceFixture;
let other: WorkspaceFixture;
let projectId: string;
let otherProjectId: string;
let store: TaskStore;
beforeEach(async () => {
  t = makeDatabase();
  clock = makeClock(Date.UTC(2026, 10, 23, 9, 41, 0));
  workspace = await makeWorkspace(t.db);
  other = await makeWorkspace(t.db, { name: 'Other' });
  const projects = createProjectStore(t.db, { now: clock.now });
  projectId = (await projects.createProject(workspace.workspaceId, { name: 'Main' }, workspace.actor)).id;
  otherProjectId = (await projects.createProject(other.workspaceId, { name: 'Theirs' }, other.actor)).id;
  store = createTaskStore(t.db, { now: clock.now });
});
afterEach(() => t.cleanup());

interface EventRow {
  id: string;
  workspace_id: string;
  type: string;
  occurred_at: number;
  payload: string;
}
const taskEvents = () => (t.db.prepare("SELECT * FROM events WHERE type LIKE 'task.%' ORDER BY rowid").all() as EventRow[]);
const taskCount = () => t.db.prepare('SELECT count(*) FROM tasks').pluck().get();
const create = (input: Partial<Parameters<TaskStore['createTask']>[1]> = {}) =>
  store.createTask(workspace.workspaceId, { projectId, title: 'Write the launch checklist', ...input }, workspace.actor);

describe('task store: create and read', () => {
  it('creates a task with the documented defaults and records task.created with the full envelope', async () => {
    const task = await create();
    expect(task).toEqual({
      id: expect.stringMatching(/^tsk_[A-Za-z0-9]{20}$/),
      projectId,
      title: 'Write the launch checklist',
      status: 'TODO',
      priority: 'MEDIUM',
      dueOn: null,
      assigneeId: null,
      version: 1,
      createdAt: '2026-11-23T09:41:00.000Z',
      updatedAt: '2026-11-23T09:41:00.000Z',
      completedAt: null,
    });
    expect(await store.getTask(workspace.workspaceId, task.id)).toEqual(task);
    const [event] = taskEvents();
    expect(event).toMatchObject({ workspace_id: workspace.workspaceId, type: 'task.created', occurred_at: clock.now() });
    expect(JSON.parse(event!.payload)).toEqual({
      id: event!.id,
      type: 'task.created',
      apiVersion: '2026-11-23',
      createdAt: '2026-11-23T09:41:00.000Z',
      tenantId: workspace.workspaceId,
      actor: { id: workspace.ownerId, kind: 'USER' },
      data: { object: task },
    });
  });

  it('stores dueOn as UTC milliseconds and answers it in ISO 8601 UTC with milliseconds', async () => {
    const assignee = await makeUser(t.db, workspace.workspaceId);
    const task = await create({ dueOn: '2026-12-01T17:00:00+02:00', priority: 'HIGH', status: 'IN_PROGRESS', assigneeId: assignee });
    expect(task).toMatchObject({ dueOn: '2026-12-01T15:00:00.000Z', priority: 'HIGH', status: 'IN_PROGRESS', assigneeId: assignee });
    expect((await create({ dueOn: '2026-12-01T15:00:00.123456Z' })).dueOn).toBe('2026-12-01T15:00:00.123Z');
    expect(t.db.prepare('SELECT due_on, priority_rank FROM tasks WHERE id = ?').get(task.id)).toEqual({ due_on: Date.UTC(2026, 11, 1, 15), priority_rank: 3 });
  });

  it('enforces the title\'s storage limit of 200 characters (code points) and its minimum of 1', async () => {
    expect((await create({ title: '🚀'.repeat(200) })).title).toHaveLength(400);
    const tooLong = () => create({ title: 'x'.repeat(201) });
    await expect(tooLong()).rejects.toThrow(StorageLimitError);
    await expect(tooLong()).rejects.toThrow(expect.objectContaining({ field: 'title', limit: 200, length: 201 }));
    await expect(create({ title: '' })).rejects.toThrow(InvalidValueError);
    expect(taskCount()).toBe(1);
  });

  it('refuses values it cannot store, writing neither a task nor an event', async () => {
    const bad: [Partial<Parameters<TaskStore['createTask']>[1]>, RegExp][] = [
      [{ dueOn: 'tomorrow' }, /dueOn must be an ISO 8601 date-time/],
      [{ dueOn: '2026-12-01' }, /dueOn must be an ISO 8601 date-time/],
      [{ dueOn: '2026-12-01T10:00:00' }, /dueOn must be an ISO 8601 date-time/],
      [{ dueOn: '2026-02-30T10:00:00Z' }, /dueOn is not a calendar date/],
      [{ status: 'CLOSED' as never }, /status must be one of TODO, IN_PROGRESS, BLOCKED, DONE/],
      [{ priority: 'URGENT' as never }, /priority must be one of LOW, MEDIUM, HIGH/],
      [{ projectId: undefined }, /projectId is required/],
      [{ title: undefined }, /title is required/],
    ];
    for (const [input, message] of bad) await expect(create(input), JSON.stringify(input)).rejects.toThrow(message);
    expect(taskCount()).toBe(0);
    expect(taskEvents()).toEqual([]);
  });

  it('treats a project or assignee of another workspace as not found', async () => {
    await expect(create({ projectId: otherProjectId })).rejects.toThrow(expect.objectContaining({ kind: 'not-found', code: 'project-not-found', id: otherProjectId }));
    await expect(create({ projectId: 'prj_missing' })).rejects.toThrow(NotFoundError);
    await expect(create({ assigneeId: other.ownerId })).rejects.toThrow(expect.objectContaining({ code: 'user-not-found' }));
    expect(taskCount()).toBe(0);
    // The composite foreign keys refuse it too, should a caller bypass the store.
    const insert = t.db.prepare(
      "INSERT INTO tasks (id, workspace_id, project_id, title, status, priority, priority_rank, assignee_id, version, created_at, updated_at) VALUES ('tsk_x', ?, ?, 't', 'TODO', 'LOW', 1, ?, 1, 1, 1)",
    );
    expect(() => insert.run(workspace.workspaceId, otherProjectId, null)).toThrow(/FOREIGN KEY/);
    expect(() => insert.run(workspace.workspaceId, projectId, other.ownerId)).toThrow(/FOREIGN KEY/);
  });

  it('keeps priority_rank in step with priority in the database', async () => {
    const task = await create({ priority: 'LOW' });
    expect(() => t.db.prepare('UPDATE tasks SET priority_rank = 3 WHERE id = ?').run(task.id)).toThrow(/CHECK constraint failed: tasks_priority_rank_matches/);
    expect([priorityRank('LOW'), priorityRank('MEDIUM'), priorityRank('HIGH')]).toEqual([1, 2, 3]);
  });

  it('hides another workspace\'s task from every operation', async () => {
    const theirs = await createTaskStore(t.db).createTask(other.workspaceId, { projectId: otherProjectId, title: 'Theirs' }, other.actor);
    const { workspaceId, actor } = workspace;
    expect(await store.getTask(workspaceId, theirs.id)).toBeUndefined();
    await expect(store.updateTask(workspaceId, theirs.id, { title: 'Mine' }, 1, actor)).rejects.toThrow(expect.objectContaining({ code: 'task-not-found' }));
    await expect(store.deleteTask(workspaceId, theirs.id, null, actor)).rejects.toThrow(expect.objectContaining({ code: 'task-not-found' }));
    expect((await store.listTasks(workspaceId, { sort: 'createdAt', order: 'desc', limit: 50 })).items).toEqual([]);
    expect((await store.getTask(other.workspaceId, theirs.id))?.title).toBe('Theirs');
  });
});

describe('task store: update and delete', () => {
  it('bumps the version by one per change and records task.updated with the new state', async () => {
    const task = await create();
    clock.advance(1500);
    const updated = await store.updateTask(workspace.workspaceId, task.id, { title: 'Ship it', priority: 'HIGH', dueOn: '2026-12-24T00:00:00Z' }, 1, workspace.actor);
    expect(updated).toEqual({ ...task, title: 'Ship it', priority: 'HIGH', dueOn: '2026-12-24T00:00:00.000Z', version: 2, updatedAt: '2026-11-23T09:41:01.500Z' });
    expect(t.db.prepare('SELECT priority_rank FROM tasks WHERE id = ?').pluck().get(task.id)).toBe(3);
    const cleared = await store.updateTask(workspace.workspaceId, task.id, { dueOn: null }, 2, workspace.actor);
    expect(cleared).toMatchObject({ dueOn: null, version: 3 });
    expect(taskEvents().map((event) => [event.type, JSON.parse(event.payload).data.object.version])).toEqual([
      ['task.created', 1],
      ['task.updated', 2],
      ['task.updated', 3],
    ]);
  });

  it('records task.completed as well when the status becomes DONE, and only then', async () => {
    const task = await create();
    const done = await store.updateTask(workspace.workspaceId, task.id, { status: 'DONE' }, 1, workspace.actor);
    await store.updateTask(workspace.workspaceId, task.id, { title: 'Renamed while done' }, 2, workspace.actor);
    await store.updateTask(workspace.workspaceId, task.id, { status: 'TODO' }, 3, workspace.actor);
    await store.updateTask(workspace.workspaceId, task.id, { status: 'DONE' }, 4, workspace.actor);
    expect(taskEvents().map((event) => event.type)).toEqual([
      'task.created',
      'task.updated',
      'task.completed',
      'task.updated',
      'task.updated',
      'task.updated',
      'task.completed',
    ]);
    const [updatedEvent, completedEvent] = taskEvents().slice(1, 3).map((event) => JSON.parse(event.payload));
    expect(completedEvent.data.object).toEqual(done);
    expect(updatedEvent.data.object).toEqual(done);
    expect(completedEvent.id).not.toBe(updatedEvent.id);
  });

  it('writes nothing for a patch that changes nothing', async () => {
    const task = await create({ priority: 'LOW' });
    clock.advance(10);
    expect(await store.updateTask(workspace.workspaceId, task.id, {}, 1, workspace.actor)).toEqual(task);
    expect(await store.updateTask(workspace.workspaceId, task.id, { priority: 'LOW', title: task.title, dueOn: null }, 1, workspace.actor)).toEqual(task);
    expect(taskEvents()).toHaveLength(1);
  });

  it('refuses a stale version with the current one and writes nothing', async () => {
    const task = await create();
    await store.updateTask(workspace.workspaceId, task.id, { title: 'Second' }, 1, workspace.actor);
    const stale = () => store.updateTask(workspace.workspaceId, task.id, { title: 'Third' }, 1, workspace.actor);
    await expect(stale()).rejects.toThrow(VersionConflictError);
    await expect(stale()).rejects.toThrow(expect.objectContaining({ kind: 'version-conflict', entity: 'task', expectedVersion: 1, currentVersion: 2 }));
    expect((await store.getTask(workspace.workspaceId, task.id))?.title).toBe('Second');
    expect(taskEvents()).toHaveLength(2);
  });

  it('moves a task between projects and assignees of its workspace only', async () => {
    const task = await create();
    const second = (await createProjectStore(t.db).createProject(workspace.workspaceId, { name: 'Second' }, workspace.actor)).id;
    const member = await makeUser(t.db, workspace.workspaceId);
    expect(await store.updateTask(workspace.workspaceId, task.id, { projectId: second, assigneeId: member }, 1, workspace.actor)).toMatchObject({ projectId: second, assigneeId: member, version: 2 });
    await expect(store.updateTask(workspace.workspaceId, task.id, { projectId: otherProjectId }, 2, workspace.actor)).rejects.toThrow(expect.objectContaining({ code: 'project-not-found' }));
    await expect(store.updateTask(workspace.workspaceId, task.id, { assigneeId: other.ownerId }, 2, workspace.actor)).rejects.toThrow(expect.objectContaining({ code: 'user-not-found' }));
    await expect(store.updateTask(workspace.workspaceId, task.id, { title: 'x'.repeat(201) }, 2, workspace.actor)).rejects.toThrow(StorageLimitError);
    expect(await store.updateTask(workspace.workspaceId, task.id, { assigneeId: null }, 2, workspace.actor)).toMatchObject({ assigneeId: null, version: 3 });
    expect(taskEvents()).toHaveLength(3);
  });

  it('deletes with or without a version and records task.deleted with the last state', async () => {
    const first = await create();
    const second = await create({ title: 'Second' });
    await expect(store.deleteTask(workspace.workspaceId, first.id, 2, workspace.actor)).rejects.toThrow(expect.objectContaining({ currentVersion: 1 }));
    clock.advance(100);
    expect(await store.deleteTask(workspace.workspaceId, first.id, 1, workspace.actor)).toEqual(first);
    expect(await store.deleteTask(workspace.workspaceId, second.id, null, workspace.actor)).toEqual(second);
    expect(await store.getTask(workspace.workspaceId, first.id)).toBeUndefined();
    await expect(store.deleteTask(workspace.workspaceId, first.id, null, workspace.actor)).rejects.toThrow(NotFoundError);
    const deleted = taskEvents().filter((event) => event.type === 'task.deleted');
    expect(deleted.map((event) => JSON.parse(event.payload).data.object)).toEqual([first, second]);
    expect(deleted[0]!.occurred_at).toBe(clock.now());
  });

  it('writes neither the change nor the event when the outbox insert fails', async () => {
    const task = await create();
    t.db.exec("CREATE TRIGGER fail_events BEFORE INSERT ON events BEGIN SELECT RAISE(ABORT, 'outbox down'); END");
    await expect(create({ title: 'Lost' })).rejects.toThrow(/outbox down/);
    await expect(store.updateTask(workspace.workspaceId, task.id, { status: 'DONE' }, 1, workspace.actor)).rejects.toThrow(/outbox down/);
    await expect(store.deleteTask(workspace.workspaceId, task.id, null, workspace.actor)).rejects.toThrow(/outbox down/);
    expect(taskCount()).toBe(1);
    expect(await store.getTask(workspace.workspaceId, task.id)).toEqual(task);
  });
});

describe('task store: keyset listing', () => {
  const titles = [
    'Draft the onboarding email',
    'Fix flaky login test',
    'Review pricing page copy',
    'Fix flaky login test',
    'Update dependencies',
    'Écrire la documentation',
    'migrate billing cron',
    'Audit access logs',
  ];
  const dueDates = [Date.UTC(2026, 11, 1), Date.UTC(2026, 11, 5), null, Date.UTC(2026, 11, 1), Date.UTC(2026, 10, 30, 12), null];

  /** 130 tasks with ties on every sort key, null dueOn and a few later updates; 5 in another workspace. */
  async function seed(): Promise<Task[]> {
    const created: Task[] = [];
    for (let index = 0; index < 130; index += 1) {
      if (index % 3 === 0) clock.advance(1000); // three tasks share each createdAt
      const due = dueDates[index % dueDates.length]!;
      created.push(
        await create({
          title: titles[index % titles.length]!,
          priority: (['LOW', 'MEDIUM', 'HIGH', 'MEDIUM'] as const)[index % 4],
          dueOn: due === null ? null : new Date(due).toISOString(),
        }),
      );
    }
    clock.advance(60_000);
    for (let index = 0; index < 130; index += 11) {
      if (index % 2 === 0) clock.advance(1);
      created[index] = await store.updateTask(workspace.workspaceId, created[index]!.id, { status: 'DONE' }, 1, workspace.actor);
    }
    const otherStore = createTaskStore(t.db, { now: clock.now });
    for (let index = 0; index < 5; index += 1) await otherStore.createTask(other.workspaceId, { projectId: otherProjectId, title: titles[0]! }, other.actor);
    return created;
  }

  function sortKey(task: Task, sort: TaskSort): number | string {
    switch (sort) {
      case 'createdAt':
        return Date.parse(task.createdAt);
      case 'updatedAt':
        return Date.parse(task.updatedAt);
      case 'dueOn':
        return task.dueOn === null ? Number.MAX_SAFE_INTEGER : Date.parse(task.dueOn);
      case 'priority':
        return priorityRank(task.priority);
      case 'title':
        return task.title;
    }
  }

  /** SQLite's BINARY collation: UTF-8 bytes. */
  function compare(a: string | number, b: string | number): number {
    if (typeof a === 'string' && typeof b === 'string') return Buffer.compare(Buffer.from(a), Buffer.from(b));
    return (a as number) - (b as number);
  }

  async function walk(sort: TaskSort, order: 'asc' | 'desc', limit: number): Promise<{ ids: string[]; pages: number }> {
    const ids: string[] = [];
    let after = null;
    let pages = 0;
    do {
      const page = await store.listTasks(workspace.workspaceId, { sort, order, limit, after });
      expect(page.items.length).toBeLessThanOrEqual(limit);
      if (page.nextAfter) expect(page.items).toHaveLength(limit);
      ids.push(...page.items.map((task) => task.id));
      after = page.nextAfter;
      pages += 1;
    } while (after && pages < 1000);
    return { ids, pages };
  }

  for (const sort of taskSorts) {
    for (const order of ['asc', 'desc'] as const) {
      it(`walks every task exactly once in (${sort}, id) ${order} order at every page size`, async () => {
        const tasks = await seed();
        const expected = [...tasks].sort((a, b) => compare(sortKey(a, sort), sortKey(b, sort)) || compare(a.id, b.id)).map((task) => task.id);
        if (order === 'desc') expected.reverse();
        for (const limit of [1, 7, 50, 100, 130]) {
          const { ids, pages } = await walk(sort, order, limit);
          expect(ids, `limit ${limit}`).toEqual(expected);
          expect(new Set(ids).size).toBe(130);
          expect(pages).toBe(Math.ceil(130 / limit));
        }
      });
    }
  }

  it('sorts null dueOn after every date ascending and before every date descending', async () => {
    await seed();
    const ascending = (await store.listTasks(workspace.workspaceId, { sort: 'dueOn', order: 'asc', limit: 130 })).items.map((task) => task.dueOn);
    const firstNull = ascending.indexOf(null);
    expect(firstNull).toBeGreaterThan(0);
    expect(ascending.slice(firstNull).every((due) => due === null)).toBe(true);
    const descending = (await store.listTasks(workspace.workspaceId, { sort: 'dueOn', order: 'desc', limit: 130 })).items.map((task) => task.dueOn);
    expect(descending.slice(0, ascending.length - firstNull).every((due) => due === null)).toBe(true);
    expect(descending.at(-1)).not.toBeNull();
  });

  it('gives the compared key of the last row as the next position: rank for priority, the null stand-in for dueOn', async () => {
    await seed();
    const byPriority = await store.listTasks(workspace.workspaceId, { sort: 'priority', order: 'desc', limit: 3 });
    expect(byPriority.nextAfter).toEqual({ key: 3, id: byPriority.items[2]!.id });
    const byDue = await store.listTasks(workspace.workspaceId, { sort: 'dueOn', order: 'desc', limit: 2 });
    expect(byDue.nextAfter).toEqual({ key: Number.MAX_SAFE_INTEGER, id: byDue.items[1]!.id });
    expect((await store.listTasks(workspace.workspaceId, { sort: 'title', order: 'asc', limit: 1 })).nextAfter?.key).toBe('Audit access logs');
  });

  it('neither repeats nor skips a row when rows are added or removed between pages', async () => {
    const tasks = await seed();
    const first = await store.listTasks(workspace.workspaceId, { sort: 'createdAt', order: 'desc', limit: 50 });
    clock.advance(1000);
    const added = await create({ title: 'Added while paging' });
    const removed = tasks.find((task) => !first.items.some((item) => item.id === task.id))!;
    await store.deleteTask(workspace.workspaceId, removed.id, null, workspace.actor);
    const rest: string[] = [];
    let after = first.nextAfter;
    while (after) {
      const page = await store.listTasks(workspace.workspaceId, { sort: 'createdAt', order: 'desc', limit: 50, after });
      rest.push(...page.items.map((task) => task.id));
      after = page.nextAfter;
    }
    const seen = [...first.items.map((task) => task.id), ...rest];
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toHaveLength(129);
    expect(seen).not.toContain(added.id);
    expect(seen).not.toContain(removed.id);
  });

  it('answers every sort and order from its index, without sorting and seeking past the position', async () => {
    const { statements, stop } = recordPreparedStatements(t.db);
    const fresh = createTaskStore(t.db);
    await create();
    for (const sort of taskSorts) {
      for (const order of ['asc', 'desc'] as const) {
        statements.length = 0;
        await fresh.listTasks(workspace.workspaceId, { sort, order, limit: 5 });
        await fresh.listTasks(workspace.workspaceId, { sort, order, limit: 5, after: { key: sort === 'title' ? 'M' : 2, id: 'tsk_M' } });
        const lists = statements.filter((source) => source.startsWith('select'));
        expect(lists).toHaveLength(2);
        const index = { createdAt: 'tasks_created_at_idx', updatedAt: 'tasks_updated_at_idx', dueOn: 'tasks_due_on_idx', priority: 'tasks_priority_rank_idx', title: 'tasks_title_idx' }[sort];
        for (const [position, source] of lists.entries()) {
          const plan = queryPlanOf(t.db, source);
          expect(plan, `${sort} ${order}`).toContain(`USING INDEX ${index}`);
          expect(plan, `${sort} ${order}`).not.toMatch(/TEMP B-TREE/);
          if (position === 1) expect(plan, `${sort} ${order}`).toMatch(order === 'asc' ? /workspace_id=\? AND .*>/ : /workspace_id=\? AND .*</);
        }
      }
    }
    stop();
  });
});

describe('task store: completion time', () => {
  it('stamps completedAt when a task moves to DONE, keeps it while DONE, clears it when it leaves DONE', async () => {
    const task = await create();
    expect(task.completedAt).toBeNull();
    clock.advance(60_000);
    const done = await store.updateTask(workspace.workspaceId, task.id, { status: 'DONE' }, 1, workspace.actor);
    expect(done.completedAt).toBe(done.updatedAt);
    expect(done.completedAt).toBe(new Date(clock.now()).toISOString());
    clock.advance(60_000);
    const renamed = await store.updateTask(workspace.workspaceId, task.id, { title: 'Still done' }, 2, workspace.actor);
    expect(renamed.completedAt).toBe(done.completedAt);
    clock.advance(60_000);
    const reopened = await store.updateTask(workspace.workspaceId, task.id, { status: 'IN_PROGRESS' }, 3, workspace.actor);
    expect(reopened.completedAt).toBeNull();
    clock.advance(60_000);
    const doneAgain = await store.updateTask(workspace.workspaceId, task.id, { status: 'DONE' }, 4, workspace.actor);
    expect(doneAgain.completedAt).toBe(new Date(clock.now()).toISOString());
    expect(await store.getTask(workspace.workspaceId, task.id)).toEqual(doneAgain);
    // The event payloads carry it too.
    expect(JSON.parse(taskEvents().at(-1)!.payload).data.object.completedAt).toBe(doneAgain.completedAt);
  });

  it('gives a task created DONE its creation time', async () => {
    const task = await create({ status: 'DONE' });
    expect(task.completedAt).toBe(task.createdAt);
  });

  it('fills completedAt of DONE tasks written without it from updated_at when the database is opened, through the empty partial index', async () => {
    const done = await create();
    clock.advance(5000);
    await store.updateTask(workspace.workspaceId, done.id, { status: 'DONE' }, 1, workspace.actor);
    const open = await create();
    // As a database migrated from before completed_at holds them: DONE without a completion time.
    t.db.prepare('UPDATE tasks SET completed_at = NULL, updated_at = ? WHERE id = ?').run(Date.UTC(2026, 5, 1), done.id);
    // The statement the backfill runs finds its rows through the partial index, not a table scan.
    const { statements, stop } = recordPreparedStatements(t.db);
    t.db.exec('SAVEPOINT look');
    backfillTaskCompletions(t.db);
    t.db.exec('ROLLBACK TO look; RELEASE look');
    stop();
    const update = statements.find((source) => source.startsWith('update'))!;
    const plan = queryPlanOf(t.db, update);
    expect(plan).toContain('USING INDEX tasks_done_without_completed_at_idx');
    t.db.close();
    const reopened = openDatabase(t.path);
    try {
      const rows = createTaskStore(reopened);
      expect((await rows.getTask(workspace.workspaceId, done.id))?.completedAt).toBe('2026-06-01T00:00:00.000Z');
      expect((await rows.getTask(workspace.workspaceId, open.id))?.completedAt).toBeNull();
      expect(backfillTaskCompletions(reopened)).toBe(0);
    } finally {
      reopened.close();
    }
  });
});
