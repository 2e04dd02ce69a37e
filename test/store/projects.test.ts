import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createProjectStore, projectSorts, type Project, type ProjectStore } from '../../src/store/projects.js';
import { createTaskStore } from '../../src/store/tasks.js';
import { InvalidValueError, NotFoundError, ProjectHasTasksError, StorageLimitError, VersionConflictError } from '../../src/store/workPlatformErrors.js';
import { rethrowConstraintFailure } from '../../src/store/workPlatformValues.js';
import { makeClock, makeDatabase, type TempDatabase } from './factories.js';
import { makeWorkspace, type WorkspaceFixture } from './workPlatformFactories.js';

let t: TempDatabase;
let clock: ReturnType<typeof makeClock>;
let workspace: WorkspaceFixture;
let other: WorkspaceFixture;
let store: ProjectStore;
beforeEach(async () => {
  t = makeDatabase();
  clock = makeClock(Date.UTC(2026, 10, 23, 9, 41, 0));
  workspace = await makeWorkspace(t.db);
  other = await makeWorkspace(t.db, { name: 'Other' });
  store = createProjectStore(t.db, { now: clock.now });
});
afterEach(() => t.cleanup());

interface EventRow {
  id: string;
  workspace_id: string;
  type: string;
  occurred_at: number;
  payload: string;
}
const eventRows = () => t.db.prepare('SELECT * FROM events ORDER BY rowid').all() as EventRow[];
const projectCount = () => t.db.prepare('SELECT count(*) FROM projects').pluck().get();

describe('project store: writes', () => {
  it('creates a project with defaults, ISO timestamps and version 1, and records project.created', async () => {
    const project = await store.createProject(workspace.workspaceId, { name: 'Website relaunch' }, workspace.actor);
    expect(project).toEqual({
      id: expect.stringMatching(/^prj_[A-Za-z0-9]{20}$/),
      name: 'Website relaunch',
      description: null,
      status: 'ACTIVE',
      version: 1,
      createdAt: '2026-11-23T09:41:00.000Z',
      updatedAt: '2026-11-23T09:41:00.000Z',
    });
    expect(await store.getProject(workspace.workspaceId, project.id)).toEqual(project);
    const [event] = eventRows();
    expect(event).toMatchObject({ workspace_id: workspace.workspaceId, type: 'project.created', occurred_at: clock.now() });
    expect(JSON.parse(event!.payload)).toEqual({
      id: event!.id,
      type: 'project.created',
      apiVersion: '2026-11-23',
      createdAt: '2026-11-23T09:41:00.000Z',
      tenantId: workspace.workspaceId,
      actor: { id: workspace.ownerId, kind: 'USER' },
      data: { object: project },
    });
    expect(event!.id).toMatch(/^evt_[A-Za-z0-9]{20}$/);
  });

  it('enforces the storage limits in characters (code points), 120 for name and 2000 for description', async () => {
    const emoji = '😀';
    expect((await store.createProject(workspace.workspaceId, { name: emoji.repeat(120), description: 'é'.repeat(2000) }, workspace.actor)).name).toHaveLength(240);
    const tooLong = () => store.createProject(workspace.workspaceId, { name: 'x'.repeat(121) }, workspace.actor);
    await expect(tooLong()).rejects.toThrow(StorageLimitError);
    await expect(tooLong()).rejects.toThrow(expect.objectContaining({ kind: 'storage-limit-exceeded', field: 'name', limit: 120, length: 121 }));
    await expect(store.createProject(workspace.workspaceId, { name: 'ok', description: 'd'.repeat(2001) }, workspace.actor)).rejects.toThrow(
      expect.objectContaining({ field: 'description', limit: 2000 }),
    );
    await expect(store.createProject(workspace.workspaceId, { name: '' }, workspace.actor)).rejects.toThrow(InvalidValueError);
    await expect(store.createProject(workspace.workspaceId, { name: 'x', status: 'OPEN' as never }, workspace.actor)).rejects.toThrow(/status must be one of ACTIVE, ARCHIVED/);
    expect(projectCount()).toBe(1);
    expect(eventRows()).toHaveLength(1);
  });

  it('updates with the expected version: one more per change, project.updated, nothing for a no-op', async () => {
    const created = await store.createProject(workspace.workspaceId, { name: 'A', description: 'first' }, workspace.actor);
    clock.advance(1000);
    const updated = await store.updateProject(workspace.workspaceId, created.id, { status: 'ARCHIVED', description: null }, 1, workspace.actor);
    expect(updated).toEqual({ ...created, status: 'ARCHIVED', description: null, version: 2, updatedAt: '2026-11-23T09:41:01.000Z' });
    expect(eventRows().map((event) => event.type)).toEqual(['project.created', 'project.updated']);
    expect(JSON.parse(eventRows()[1]!.payload).data.object).toEqual(updated);

    clock.advance(1000);
    expect(await store.updateProject(workspace.workspaceId, created.id, { status: 'ARCHIVED', name: 'A' }, 2, workspace.actor)).toEqual(updated);
    expect(await store.updateProject(workspace.workspaceId, created.id, {}, 2, workspace.actor)).toEqual(updated);
    expect(eventRows()).toHaveLength(2);
  });

  it('refuses a stale version with the current one, and writes nothing', async () => {
    const created = await store.createProject(workspace.workspaceId, { name: 'A' }, workspace.actor);
    await store.updateProject(workspace.workspaceId, created.id, { name: 'B' }, 1, workspace.actor);
    const stale = () => store.updateProject(workspace.workspaceId, created.id, { name: 'C' }, 1, workspace.actor);
    await expect(stale()).rejects.toThrow(VersionConflictError);
    await expect(stale()).rejects.toThrow(expect.objectContaining({ kind: 'version-conflict', entity: 'project', expectedVersion: 1, currentVersion: 2 }));
    expect((await store.getProject(workspace.workspaceId, created.id))?.name).toBe('B');
    expect(eventRows()).toHaveLength(2);
  });

  it('treats another workspace\'s project as not found, for every operation', async () => {
    const theirs = await store.createProject(other.workspaceId, { name: 'Theirs' }, other.actor);
    const { workspaceId, actor } = workspace;
    expect(await store.getProject(workspaceId, theirs.id)).toBeUndefined();
    await expect(store.updateProject(workspaceId, theirs.id, { name: 'Mine' }, 1, actor)).rejects.toThrow(expect.objectContaining({ code: 'project-not-found' }));
    await expect(store.deleteProject(workspaceId, theirs.id, null, actor)).rejects.toThrow(NotFoundError);
    await expect(store.deleteProject(workspaceId, 'prj_missing', null, actor)).rejects.toThrow(/No project with id "prj_missing"/);
    expect(await store.getProject(other.workspaceId, theirs.id)).toEqual(theirs);
    expect((await store.listProjects(workspaceId, { sort: 'createdAt', order: 'desc', limit: 50 })).items).toEqual([]);
  });

  it('deletes with or without a version, records project.deleted with the last state, and refuses a project with tasks', async () => {
    const empty = await store.createProject(workspace.workspaceId, { name: 'Empty' }, workspace.actor);
    const busy = await store.createProject(workspace.workspaceId, { name: 'Busy' }, workspace.actor);
    const tasks = createTaskStore(t.db, { now: clock.now });
    await tasks.createTask(workspace.workspaceId, { projectId: busy.id, title: 'One' }, workspace.actor);
    await tasks.createTask(workspace.workspaceId, { projectId: busy.id, title: 'Two' }, workspace.actor);

    await expect(store.deleteProject(workspace.workspaceId, empty.id, 2, workspace.actor)).rejects.toThrow(expect.objectContaining({ currentVersion: 1 }));
    expect(await store.deleteProject(workspace.workspaceId, empty.id, 1, workspace.actor)).toEqual(empty);
    expect(await store.getProject(workspace.workspaceId, empty.id)).toBeUndefined();
    const deleted = eventRows().at(-1)!;
    expect(deleted.type).toBe('project.deleted');
    expect(JSON.parse(deleted.payload).data.object).toEqual(empty);

    const refused = () => store.deleteProject(workspace.workspaceId, busy.id, null, workspace.actor);
    await expect(refused()).rejects.toThrow(ProjectHasTasksError);
    await expect(refused()).rejects.toThrow(expect.objectContaining({ kind: 'project-has-tasks', projectId: busy.id, taskCount: 2 }));
    expect(await store.getProject(workspace.workspaceId, busy.id)).toEqual(busy);
    expect(eventRows().filter((event) => event.type === 'project.deleted')).toHaveLength(1);
    // The foreign key refuses it as well, should a caller bypass the store.
    expect(() => t.db.prepare('DELETE FROM projects WHERE id = ?').run(busy.id)).toThrow(/FOREIGN KEY/);
  });

  it('writes nothing when the outbox insert fails: change and event share one transaction', async () => {
    t.db.exec("CREATE TRIGGER fail_events BEFORE INSERT ON events BEGIN SELECT RAISE(ABORT, 'outbox down'); END");
    await expect(store.createProject(workspace.workspaceId, { name: 'A' }, workspace.actor)).rejects.toThrow(/outbox down/);
    expect(projectCount()).toBe(0);
  });

  it('maps the database\'s length CHECK failures to StorageLimitError and passes anything else on', async () => {
    const created = await store.createProject(workspace.workspaceId, { name: 'A' }, workspace.actor);
    const failure = (statement: string) => {
      try {
        t.db.prepare(statement).run(created.id);
      } catch (error) {
        return error;
      }
      throw new Error('expected the statement to fail');
    };
    const fields = { projects_name_length: { field: 'name', limit: 120 } };
    const tooLong = failure(`UPDATE projects SET name = '${'x'.repeat(121)}' WHERE id = ?`);
    expect(() => rethrowConstraintFailure(tooLong, fields)).toThrow(expect.objectContaining({ kind: 'storage-limit-exceeded', field: 'name', limit: 120 }));
    const badStatus = failure("UPDATE projects SET status = 'OPEN' WHERE id = ?");
    expect(() => rethrowConstraintFailure(badStatus, fields)).toThrow(badStatus as Error);
    expect(() => rethrowConstraintFailure(new Error('other'), fields)).toThrow('other');
  });
});

describe('project store: listing', () => {
  async function seed(): Promise<Project[]> {
    const names = ['Beta', 'alpha', 'Alpha', 'Beta', 'Gamma', 'Beta', 'Ärger', 'Zeta'];
    const created: Project[] = [];
    for (const [index, name] of names.entries()) {
      if (index % 3 !== 0) clock.advance(1); // groups of equal createdAt
      created.push(await store.createProject(workspace.workspaceId, { name }, workspace.actor));
    }
    clock.advance(5);
    created[2] = await store.updateProject(workspace.workspaceId, created[2]!.id, { description: 'x' }, 1, workspace.actor);
    created[5] = await store.updateProject(workspace.workspaceId, created[5]!.id, { description: 'y' }, 1, workspace.actor);
    await store.createProject(other.workspaceId, { name: 'Alpha' }, other.actor);
    return created;
  }

  const keyOf = (project: Project, sort: (typeof projectSorts)[number]) =>
    sort === 'name' ? project.name : Date.parse(sort === 'createdAt' ? project.createdAt : project.updatedAt);

  function compare(a: string | number, b: string | number): number {
    if (typeof a === 'string' && typeof b === 'string') return Buffer.compare(Buffer.from(a), Buffer.from(b));
    return (a as number) - (b as number);
  }

  for (const sort of projectSorts) {
    for (const order of ['asc', 'desc'] as const) {
      it(`walks every project exactly once, in (${sort}, id) ${order} order, at every page size`, async () => {
        const projects = await seed();
        const expected = [...projects]
          .sort((a, b) => compare(keyOf(a, sort), keyOf(b, sort)) || compare(a.id, b.id))
          .map((project) => project.id);
        if (order === 'desc') expected.reverse();
        for (const limit of [1, 2, 3, 8, 9, 50]) {
          const seen: string[] = [];
          let after = null;
          let pages = 0;
          do {
            const page = await store.listProjects(workspace.workspaceId, { sort, order, limit, after });
            expect(page.items.length).toBeLessThanOrEqual(limit);
            seen.push(...page.items.map((project) => project.id));
            after = page.nextAfter;
            pages += 1;
          } while (after);
          expect(seen, `limit ${limit}`).toEqual(expected);
          expect(pages).toBe(Math.max(1, Math.ceil(expected.length / limit)));
        }
      });
    }
  }

  it('gives the last row\'s key and id as the next position, and null on the last page', async () => {
    await seed();
    const page = await store.listProjects(workspace.workspaceId, { sort: 'name', order: 'asc', limit: 2 });
    expect(page.nextAfter).toEqual({ key: page.items[1]!.name, id: page.items[1]!.id });
    expect((await store.listProjects(workspace.workspaceId, { sort: 'name', order: 'asc', limit: 8 })).nextAfter).toBeNull();
  });

  it('refuses an unknown sort, a bad limit and a position that does not fit the sort', async () => {
    const { workspaceId } = workspace;
    await expect(store.listProjects(workspaceId, { sort: 'title' as never, order: 'asc', limit: 5 })).rejects.toThrow(/Unknown sort "title"/);
    await expect(store.listProjects(workspaceId, { sort: 'name', order: 'up' as never, limit: 5 })).rejects.toThrow(/Unknown order/);
    await expect(store.listProjects(workspaceId, { sort: 'name', order: 'asc', limit: 0 })).rejects.toThrow(/limit/);
    await expect(store.listProjects(workspaceId, { sort: 'name', order: 'asc', limit: 5, after: { key: 5, id: 'prj_x' } })).rejects.toThrow(/does not fit/);
    await expect(store.listProjects(workspaceId, { sort: 'createdAt', order: 'asc', limit: 5, after: { key: 'x', id: 'prj_x' } })).rejects.toThrow(/does not fit/);
  });
});
