// Tasks of the Work-Platform API. Every read and write is scoped by workspace (another
// workspace's task, project or user is "not found"), every change bumps `version` by one and
// records its outbox event(s) in the same transaction.
import type { components } from '../../generated/work-platform/types.js';
import { sortFields } from '../../generated/work-platform/rules.js';
import type BetterSqlite3 from 'better-sqlite3';
import { and, eq, sql } from 'drizzle-orm';
import {
  dueOnSortExpressionText,
  projects,
  storageLimits,
  taskPriorities,
  tasks,
  users,
  taskStatuses,
  type TaskPriority,
  type TaskStatus,
} from '../../db/schema.js';
import { drizzleFor, placeholdersFor, workspaceRowStatement } from './drizzle.js';
import { engineOf, type StoreSource } from './engine.js';
import { defaultRandomBytes, newId, type RandomBytes } from './ids.js';
import {
  checkListOptions,
  keysetCondition,
  keysetOrderBy,
  engineKeysetList,
  statementCache,
  toPageOfKeysetRows,
  type KeysetListOptions,
  type KeysetPage,
  type SortKeyDefinition,
  type SortOrder,
} from './keysetPages.js';
import { createOutboxRecorder, type EventActor } from './outboxEvents.js';
import { InvalidValueError, NotFoundError } from './workPlatformErrors.js';
import { changeWriter, checkText, formatTimestamp, parseTimestamp, versionedRow, type ConstraintFields } from './workPlatformValues.js';

export { taskPriorities, taskStatuses, type TaskPriority, type TaskStatus };

/** A task exactly as the API returns it, and what creating and changing one take: the contract's schemas. */
export type Task = components['schemas']['Task'];
export type CreateTaskInput = components['schemas']['TaskCreate'];
export type UpdateTaskInput = components['schemas']['TaskUpdate'];

/** The fields the list sorts by: the contract's `TaskSort` parameter. */
export const taskSorts = sortFields.TaskSort;
export type TaskSort = (typeof taskSorts)[number];

export interface TaskStoreOptions {
  now?: () => number;
  randomBytes?: RandomBytes;
}

export interface TaskStore {
  createTask(workspaceId: string, input: CreateTaskInput, actor: EventActor): Promise<Task>;
  /** Undefined when missing or in another workspace. */
  getTask(workspaceId: string, id: string): Promise<Task | undefined>;
  /**
   * Applies the given members when `expectedVersion` is the current version. Records
   * task.updated, and task.completed as well when the status becomes DONE. A patch that changes
   * nothing writes nothing: version, updatedAt and events stay as they are.
   */
  updateTask(workspaceId: string, id: string, patch: UpdateTaskInput, expectedVersion: number, actor: EventActor): Promise<Task>;
  /** Deletes a task; `expectedVersion`, when given, must be the current version. Returns the task as it was. */
  deleteTask(workspaceId: string, id: string, expectedVersion: number | null, actor: EventActor): Promise<Task>;
  listTasks(workspaceId: string, options: KeysetListOptions<TaskSort>): Promise<KeysetPage<Task>>;
}

type TaskRow = typeof tasks.$inferSelect;
/** The columns a Task is made of. */
type TaskFields = Omit<TaskRow, 'workspaceId' | 'priorityRank'>;

export function toTask(row: TaskFields): Task {
  const createdAt = formatTimestamp(row.createdAt);
  // Most tasks were never changed after creation.
  const updatedAt = row.updatedAt === row.createdAt ? createdAt : formatTimestamp(row.updatedAt);
  return {
    id: row.id,
    projectId: row.projectId,
    title: row.title,
    status: row.status,
    priority: row.priority,
    dueOn: row.dueOn === null ? null : formatTimestamp(row.dueOn),
    assigneeId: row.assigneeId,
    version: row.version,
    createdAt,
    updatedAt,
    completedAt: row.completedAt === null ? null : row.completedAt === row.updatedAt ? updatedAt : formatTimestamp(row.completedAt),
  };
}

/** The columns of a Task besides its id (what a list reads after the id and the sort key, in the order of ListedTaskRow). */
export const listedTaskColumns = {
  projectId: tasks.projectId,
  title: tasks.title,
  status: tasks.status,
  priority: tasks.priority,
  dueOn: tasks.dueOn,
  assigneeId: tasks.assigneeId,
  version: tasks.version,
  createdAt: tasks.createdAt,
  updatedAt: tasks.updatedAt,
  completedAt: tasks.completedAt,
};
type ListedTaskRow = [
  id: string,
  sortKey: string | number,
  projectId: string,
  title: string,
  status: TaskStatus,
  priority: TaskPriority,
  dueOn: number | null,
  assigneeId: string | null,
  version: number,
  createdAt: number,
  updatedAt: number,
  completedAt: number | null,
];

function listedTask([id, , projectId, title, status, priority, dueOn, assigneeId, version, createdAt, updatedAt, completedAt]: ListedTaskRow): Task {
  return toTask({ id, projectId, title, status, priority, dueOn, assigneeId, version, createdAt, updatedAt, completedAt });
}

/** LOW = 1, MEDIUM = 2, HIGH = 3: what the priority sort orders by. */
export function priorityRank(priority: TaskPriority): number {
  return taskPriorities.indexOf(priority) + 1;
}

const sortKeys: Record<TaskSort, SortKeyDefinition> = {
  createdAt: { expression: tasks.createdAt, keyType: 'number' },
  updatedAt: { expression: tasks.updatedAt, keyType: 'number' },
  // Nulls sort as Number.MAX_SAFE_INTEGER: last ascending, first descending.
  dueOn: { expression: sql.raw(dueOnSortExpressionText), keyType: 'number', seekBound: true },
  priority: { expression: tasks.priorityRank, keyType: 'number' },
  title: { expression: tasks.title, keyType: 'string' },
};

const constraintFields: ConstraintFields = {
  tasks_title_length: { field: 'title', limit: storageLimits.taskTitle },
};

function checkTaskValues(input: UpdateTaskInput): { dueOn?: number | null } {
  if (input.title !== undefined) checkText('title', input.title, storageLimits.taskTitle, { allowEmpty: false });
  if (input.status !== undefined && !(taskStatuses as readonly unknown[]).includes(input.status)) {
    throw new InvalidValueError('status', `must be one of ${taskStatuses.join(', ')}.`);
  }
  if (input.priority !== undefined && !(taskPriorities as readonly unknown[]).includes(input.priority)) {
    throw new InvalidValueError('priority', `must be one of ${taskPriorities.join(', ')}.`);
  }
  if (input.projectId !== undefined && typeof input.projectId !== 'string') throw new InvalidValueError('projectId', 'must be a string.');
  if (input.assigneeId !== undefined && input.assigneeId !== null && typeof input.assigneeId !== 'string') {
    throw new InvalidValueError('assigneeId', 'must be a string or null.');
  }
  if (input.dueOn === undefined) return {};
  return { dueOn: input.dueOn === null ? null : parseTimestamp('dueOn', input.dueOn) };
}

export function createTaskStore(source: StoreSource, options: TaskStoreOptions = {}): TaskStore {
  const now = options.now ?? Date.now;
  const randomBytes = options.randomBytes ?? defaultRandomBytes;
  const engine = engineOf(source);
  const { orm } = engine;
  const outbox = createOutboxRecorder(engine, randomBytes);

  const inWorkspace = and(eq(tasks.workspaceId, sql.placeholder('workspaceId')), eq(tasks.id, sql.placeholder('id')));
  const selectOne = engine.statement<TaskRow>(orm.select().from(tasks).where(inWorkspace));
  const projectExists = workspaceRowStatement(engine, projects);
  const userExists = workspaceRowStatement(engine, users);
  const insert = engine.statement(orm.insert(tasks).values(placeholdersFor(tasks)));
  const update = engine.statement(
    orm
      .update(tasks)
      .set({
        projectId: sql`${sql.placeholder('projectId')}`,
        title: sql`${sql.placeholder('title')}`,
        status: sql`${sql.placeholder('status')}`,
        priority: sql`${sql.placeholder('priority')}`,
        priorityRank: sql`${sql.placeholder('priorityRank')}`,
        dueOn: sql`${sql.placeholder('dueOn')}`,
        assigneeId: sql`${sql.placeholder('assigneeId')}`,
        version: sql`${sql.placeholder('version')}`,
        updatedAt: sql`${sql.placeholder('updatedAt')}`,
        completedAt: sql`${sql.placeholder('completedAt')}`,
      })
      .where(inWorkspace),
  );
  const remove = engine.statement(orm.delete(tasks).where(inWorkspace));
  const listStatement = statementCache<ReturnType<typeof prepareList>>();

  function prepareList(definition: SortKeyDefinition, order: SortOrder, afterPosition: boolean) {
    const inThisWorkspace = eq(tasks.workspaceId, sql.placeholder('workspaceId'));
    const query = orm
      .select({ id: tasks.id, sortKey: sql`${definition.expression}`, ...listedTaskColumns })
      .from(tasks)
      .where(afterPosition ? and(inThisWorkspace, keysetCondition(definition, tasks.id, order)) : inThisWorkspace)
      .orderBy(...keysetOrderBy(definition, tasks.id, order))
      .limit(sql.placeholder('limit'));
    return engineKeysetList<ListedTaskRow>(engine, query);
  }

  const write = changeWriter(engine, constraintFields);

  async function checkReferences(workspaceId: string, row: Pick<TaskRow, 'projectId' | 'assigneeId'>, previous?: TaskRow): Promise<void> {
    if (row.projectId !== previous?.projectId && !(await projectExists.row({ workspaceId, id: row.projectId }))) {
      throw new NotFoundError('project', row.projectId);
    }
    if (row.assigneeId !== null && row.assigneeId !== previous?.assigneeId && !(await userExists.row({ workspaceId, id: row.assigneeId }))) {
      throw new NotFoundError('user', row.assigneeId);
    }
  }

  async function currentRow(workspaceId: string, id: string, expectedVersion: number | null): Promise<TaskRow> {
    return versionedRow('task', id, await selectOne.object({ workspaceId, id }), expectedVersion);
  }

  return {
    async createTask(workspaceId, input, actor) {
      if (input.projectId === undefined) throw new InvalidValueError('projectId', 'is required.');
      if (input.title === undefined) throw new InvalidValueError('title', 'is required.');
      const { dueOn = null } = checkTaskValues(input);
      const at = now();
      const priority = input.priority ?? 'MEDIUM';
      const row: TaskRow = {
        id: newId('tsk', randomBytes),
        workspaceId,
        projectId: input.projectId,
        title: input.title,
        status: input.status ?? 'TODO',
        priority,
        priorityRank: priorityRank(priority),
        dueOn,
        assigneeId: input.assigneeId ?? null,
        version: 1,
        createdAt: at,
        updatedAt: at,
        completedAt: input.status === 'DONE' ? at : null,
      };
      return write(async () => {
        await checkReferences(workspaceId, row);
        await insert.run(row);
        const task = toTask(row);
        await outbox.record(workspaceId, 'task.created', actor, at, task);
        return task;
      });
    },

    async getTask(workspaceId, id) {
      const row = await engine.read(() => selectOne.object({ workspaceId, id }));
      return row ? toTask(row) : undefined;
    },

    async updateTask(workspaceId, id, patch, expectedVersion, actor) {
      const checked = checkTaskValues(patch);
      return write(async () => {
        const current = await currentRow(workspaceId, id, expectedVersion);
        const priority = patch.priority ?? current.priority;
        const next: TaskRow = {
          ...current,
          projectId: patch.projectId ?? current.projectId,
          title: patch.title ?? current.title,
          status: patch.status ?? current.status,
          priority,
          priorityRank: priorityRank(priority),
          dueOn: checked.dueOn === undefined ? current.dueOn : checked.dueOn,
          assigneeId: patch.assigneeId === undefined ? current.assigneeId : patch.assigneeId,
        };
        const changed = (['projectId', 'title', 'status', 'priority', 'dueOn', 'assigneeId'] as const).some((name) => next[name] !== current[name]);
        if (!changed) return toTask(current);
        await checkReferences(workspaceId, next, current);
        next.version = current.version + 1;
        next.updatedAt = now();
        // Moving to DONE stamps the completion; leaving DONE clears it; staying DONE keeps it.
        next.completedAt = next.status !== 'DONE' ? null : current.status === 'DONE' ? current.completedAt : next.updatedAt;
        await update.run(next);
        const task = toTask(next);
        await outbox.record(workspaceId, 'task.updated', actor, next.updatedAt, task);
        if (next.status === 'DONE' && current.status !== 'DONE') await outbox.record(workspaceId, 'task.completed', actor, next.updatedAt, task);
        return task;
      });
    },

    async deleteTask(workspaceId, id, expectedVersion, actor) {
      return write(async () => {
        const current = await currentRow(workspaceId, id, expectedVersion);
        await remove.run({ workspaceId, id });
        const task = toTask(current);
        await outbox.record(workspaceId, 'task.deleted', actor, now(), task);
        return task;
      });
    },

    async listTasks(workspaceId, options) {
      const definition = checkListOptions(options, sortKeys);
      const after = options.after ?? null;
      const statement = listStatement(`${options.sort}:${options.order}:${after ? 'after' : 'first'}`, () =>
        prepareList(definition, options.order, after !== null),
      );
      const rows = await engine.read(() => statement({ workspaceId, limit: options.limit + 1, afterKey: after?.key, afterId: after?.id }));
      return toPageOfKeysetRows(rows, options.limit, listedTask);
    },
  };
}

/**
 * Gives every DONE task without a completion time its last change's time, and answers how many it
 * filled. The data step of the migration that added completed_at (drizzle-kit generates schema
 * changes only): openDatabase() runs it after the migrations, every time, so a database migrated by
 * a process that stopped before the step is filled by the next one. Once filled it finds nothing
 * through the empty partial index tasks_done_without_completed_at_idx, without reading the table.
 */
export function backfillTaskCompletions(db: BetterSqlite3.Database): number {
  return drizzleFor(db)
    .update(tasks)
    .set({ completedAt: sql`${tasks.updatedAt}` })
    // Literal 'DONE' and IS NULL: the partial index's own terms, so SQLite uses it.
    .where(sql`${tasks.status} = 'DONE' AND ${tasks.completedAt} IS NULL`)
    .run().changes;
}
