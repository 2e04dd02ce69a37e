// Tasks of the Work-Platform API, a versioned resource (versionedResources.ts). A task's project
// and assignee must be of its workspace; a change records task.updated, and task.completed after
// it when the status becomes DONE.
import type { components } from '../../generated/work-platform/types.js';
import { sortFields } from '../../generated/work-platform/rules.js';
import type BetterSqlite3 from 'better-sqlite3';
import { sql } from 'drizzle-orm';
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
import { drizzleFor, workspaceRowStatement } from './drizzle.js';
import { engineOf, type StoreSource } from './engine.js';
import { defaultRandomBytes, newId } from './ids.js';
import type { KeysetListOptions, SortKeyDefinition } from './keysetPages.js';
import { versionedResource, type VersionedResourceOptions, type VersionedStore } from './versionedResources.js';
import { InvalidValueError, NotFoundError } from './workPlatformErrors.js';
import { checkText, formatTimestamp, parseTimestamp, type ConstraintFields } from './workPlatformValues.js';

export { taskPriorities, taskStatuses, type TaskPriority, type TaskStatus };

/** A task exactly as the API returns it, and what creating and changing one take: the contract's schemas. */
export type Task = components['schemas']['Task'];
export type CreateTaskInput = components['schemas']['TaskCreate'];
export type UpdateTaskInput = components['schemas']['TaskUpdate'];

/** The fields the list sorts by: the contract's `TaskSort` parameter. */
export const taskSorts = sortFields.TaskSort;
export type TaskSort = (typeof taskSorts)[number];

export type TaskStoreOptions = VersionedResourceOptions;

/** An update records task.updated, and task.completed as well when the status becomes DONE. */
export type TaskStore = VersionedStore<'Task', 'Tasks', Task, CreateTaskInput, UpdateTaskInput, KeysetListOptions<TaskSort>>;

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
  const engine = engineOf(source);
  const resource = versionedResource(
    engine,
    { table: tasks, entity: 'task', constraintFields, toItem: toTask, sortKeys, filters: {}, unlisted: ['priorityRank'] },
    options,
  );
  const projectExists = workspaceRowStatement(engine, projects);
  const userExists = workspaceRowStatement(engine, users);

  async function checkReferences(row: TaskRow, previous?: TaskRow): Promise<void> {
    const { workspaceId } = row;
    if (row.projectId !== previous?.projectId && !(await projectExists.row({ workspaceId, id: row.projectId }))) {
      throw new NotFoundError('project', row.projectId);
    }
    if (row.assigneeId !== null && row.assigneeId !== previous?.assigneeId && !(await userExists.row({ workspaceId, id: row.assigneeId }))) {
      throw new NotFoundError('user', row.assigneeId);
    }
  }

  return {
    async createTask(workspaceId, input, actor) {
      if (input.projectId === undefined) throw new InvalidValueError('projectId', 'is required.');
      if (input.title === undefined) throw new InvalidValueError('title', 'is required.');
      const { dueOn = null } = checkTaskValues(input);
      const at = resource.now();
      const priority = input.priority ?? 'MEDIUM';
      const row: TaskRow = {
        id: newId('tsk', options.randomBytes ?? defaultRandomBytes),
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
      return resource.create(row, actor, { check: () => checkReferences(row) });
    },

    getTask: resource.get,

    async updateTask(workspaceId, id, patch, expectedVersion, actor) {
      const checked = checkTaskValues(patch);
      return resource.update(workspaceId, id, expectedVersion, actor, {
        apply(current) {
          const priority = patch.priority ?? current.priority;
          return {
            ...current,
            projectId: patch.projectId ?? current.projectId,
            title: patch.title ?? current.title,
            status: patch.status ?? current.status,
            priority,
            priorityRank: priorityRank(priority),
            dueOn: checked.dueOn === undefined ? current.dueOn : checked.dueOn,
            assigneeId: patch.assigneeId === undefined ? current.assigneeId : patch.assigneeId,
          };
        },
        fields: ['projectId', 'title', 'status', 'priority', 'dueOn', 'assigneeId'],
        check: checkReferences,
        settle(next, current) {
          // Moving to DONE stamps the completion; leaving DONE clears it; staying DONE keeps it.
          next.completedAt = next.status !== 'DONE' ? null : current.status === 'DONE' ? current.completedAt : next.updatedAt;
        },
        moreEvents: (next, current) => (next.status === 'DONE' && current.status !== 'DONE' ? ['task.completed'] : []),
      });
    },

    deleteTask: (workspaceId, id, expectedVersion, actor) => resource.delete(workspaceId, id, expectedVersion, actor),

    listTasks: resource.list,
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
