// Projects of the Work-Platform API. Every read and write is scoped by workspace (another
// workspace's project is "not found"), every change bumps `version` by one and records its
// outbox event in the same transaction.
import type { components } from '../../generated/work-platform/types.js';
import { sortFields } from '../../generated/work-platform/rules.js';
import { and, count, eq, sql } from 'drizzle-orm';
import { projects, projectStatuses, storageLimits, tasks, type ProjectStatus } from '../../db/schema.js';
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
} from './keysetPages.js';
import { createOutboxRecorder, type EventActor } from './outboxEvents.js';
import { changeWriter, checkText, formatTimestamp, versionedRow, type ConstraintFields } from './workPlatformValues.js';
import { InvalidValueError, ProjectHasTasksError } from './workPlatformErrors.js';

export { projectStatuses, type ProjectStatus };

/** A project exactly as the API returns it, and what creating and changing one take: the contract's schemas. */
export type Project = components['schemas']['Project'];
export type CreateProjectInput = components['schemas']['ProjectCreate'];
export type UpdateProjectInput = components['schemas']['ProjectUpdate'];

/** The fields the list sorts by: the contract's `ProjectSort` parameter. */
export const projectSorts = sortFields.ProjectSort;
export type ProjectSort = (typeof projectSorts)[number];

export interface ProjectStoreOptions {
  now?: () => number;
  randomBytes?: RandomBytes;
}

export interface ProjectStore {
  createProject(workspaceId: string, input: CreateProjectInput, actor: EventActor): Promise<Project>;
  /** Undefined when missing or in another workspace. */
  getProject(workspaceId: string, id: string): Promise<Project | undefined>;
  /**
   * Applies the given members when `expectedVersion` is the current version. A patch that changes
   * nothing writes nothing: version, updatedAt and events stay as they are.
   */
  updateProject(workspaceId: string, id: string, patch: UpdateProjectInput, expectedVersion: number, actor: EventActor): Promise<Project>;
  /** Deletes a project without tasks; `expectedVersion`, when given, must be the current version. */
  deleteProject(workspaceId: string, id: string, expectedVersion: number | null, actor: EventActor): Promise<Project>;
  listProjects(workspaceId: string, options: KeysetListOptions<ProjectSort>): Promise<KeysetPage<Project>>;
}

type ProjectRow = typeof projects.$inferSelect;
/** The columns a Project is made of. */
type ProjectFields = Omit<ProjectRow, 'workspaceId'>;

export function toProject(row: ProjectFields): Project {
  const createdAt = formatTimestamp(row.createdAt);
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    status: row.status,
    version: row.version,
    createdAt,
    updatedAt: row.updatedAt === row.createdAt ? createdAt : formatTimestamp(row.updatedAt),
  };
}

/** What a list reads after the id and the sort key, in the order of ListedProjectRow. */
const listedProjectColumns = {
  name: projects.name,
  description: projects.description,
  status: projects.status,
  version: projects.version,
  createdAt: projects.createdAt,
  updatedAt: projects.updatedAt,
};
type ListedProjectRow = [
  id: string,
  sortKey: string | number,
  name: string,
  description: string | null,
  status: ProjectStatus,
  version: number,
  createdAt: number,
  updatedAt: number,
];

function listedProject([id, , name, description, status, version, createdAt, updatedAt]: ListedProjectRow): Project {
  return toProject({ id, name, description, status, version, createdAt, updatedAt });
}

const sortKeys: Record<ProjectSort, SortKeyDefinition> = {
  createdAt: { expression: projects.createdAt, keyType: 'number' },
  updatedAt: { expression: projects.updatedAt, keyType: 'number' },
  name: { expression: projects.name, keyType: 'string' },
};

const constraintFields: ConstraintFields = {
  projects_name_length: { field: 'name', limit: storageLimits.projectName },
  projects_description_length: { field: 'description', limit: storageLimits.projectDescription },
};

function checkStatus(status: unknown): asserts status is ProjectStatus {
  if (!(projectStatuses as readonly unknown[]).includes(status)) {
    throw new InvalidValueError('status', `must be one of ${projectStatuses.join(', ')}.`);
  }
}

function checkProjectValues(input: UpdateProjectInput): void {
  if (input.name !== undefined) checkText('name', input.name, storageLimits.projectName, { allowEmpty: false });
  if (input.description !== undefined && input.description !== null) {
    checkText('description', input.description, storageLimits.projectDescription, { allowEmpty: true });
  }
  if (input.status !== undefined) checkStatus(input.status);
}

export function createProjectStore(source: StoreSource, options: ProjectStoreOptions = {}): ProjectStore {
  const now = options.now ?? Date.now;
  const randomBytes = options.randomBytes ?? defaultRandomBytes;
  const engine = engineOf(source);
  const { orm } = engine;
  const outbox = createOutboxRecorder(engine, randomBytes);

  const inWorkspace = and(eq(projects.workspaceId, sql.placeholder('workspaceId')), eq(projects.id, sql.placeholder('id')));
  const selectOne = engine.statement<ProjectRow>(orm.select().from(projects).where(inWorkspace));
  const insert = engine.statement(
    orm
      .insert(projects)
      .values({
        id: sql.placeholder('id'),
        workspaceId: sql.placeholder('workspaceId'),
        name: sql.placeholder('name'),
        description: sql.placeholder('description'),
        status: sql.placeholder('status'),
        version: 1,
        createdAt: sql.placeholder('now'),
        updatedAt: sql.placeholder('now'),
      }),
  );
  const update = engine.statement(
    orm
      .update(projects)
      .set({
        name: sql`${sql.placeholder('name')}`,
        description: sql`${sql.placeholder('description')}`,
        status: sql`${sql.placeholder('status')}`,
        version: sql`${sql.placeholder('version')}`,
        updatedAt: sql`${sql.placeholder('updatedAt')}`,
      })
      .where(inWorkspace),
  );
  const remove = engine.statement(orm.delete(projects).where(inWorkspace));
  const countTasks = engine.statement<{ taskCount: number }>(
    orm
      .select({ taskCount: count() })
      .from(tasks)
      .where(and(eq(tasks.workspaceId, sql.placeholder('workspaceId')), eq(tasks.projectId, sql.placeholder('id')))),
  );
  const listStatement = statementCache<ReturnType<typeof prepareList>>();

  function prepareList(definition: SortKeyDefinition, order: 'asc' | 'desc', afterPosition: boolean) {
    const inThisWorkspace = eq(projects.workspaceId, sql.placeholder('workspaceId'));
    const query = orm
      .select({ id: projects.id, sortKey: sql`${definition.expression}`, ...listedProjectColumns })
      .from(projects)
      .where(afterPosition ? and(inThisWorkspace, keysetCondition(definition, projects.id, order)) : inThisWorkspace)
      .orderBy(...keysetOrderBy(definition, projects.id, order))
      .limit(sql.placeholder('limit'));
    return engineKeysetList<ListedProjectRow>(engine, query);
  }

  const write = changeWriter(engine, constraintFields);

  async function currentRow(workspaceId: string, id: string, expectedVersion: number | null): Promise<ProjectRow> {
    return versionedRow('project', id, await selectOne.object({ workspaceId, id }), expectedVersion);
  }

  return {
    async createProject(workspaceId, input, actor) {
      if (input.name === undefined) throw new InvalidValueError('name', 'is required.');
      checkProjectValues(input);
      const at = now();
      const row: ProjectRow = {
        id: newId('prj', randomBytes),
        workspaceId,
        name: input.name,
        description: input.description ?? null,
        status: input.status ?? 'ACTIVE',
        version: 1,
        createdAt: at,
        updatedAt: at,
      };
      return write(async () => {
        await insert.run({ ...row, now: row.createdAt });
        const project = toProject(row);
        await outbox.record(workspaceId, 'project.created', actor, row.createdAt, project);
        return project;
      });
    },

    async getProject(workspaceId, id) {
      const row = await engine.read(() => selectOne.object({ workspaceId, id }));
      return row ? toProject(row) : undefined;
    },

    async updateProject(workspaceId, id, patch, expectedVersion, actor) {
      checkProjectValues(patch);
      return write(async () => {
        const current = await currentRow(workspaceId, id, expectedVersion);
        const next: ProjectRow = {
          ...current,
          name: patch.name ?? current.name,
          description: patch.description === undefined ? current.description : patch.description,
          status: patch.status ?? current.status,
        };
        if (next.name === current.name && next.description === current.description && next.status === current.status) {
          return toProject(current);
        }
        next.version = current.version + 1;
        next.updatedAt = now();
        await update.run({ ...next, workspaceId, id });
        const project = toProject(next);
        await outbox.record(workspaceId, 'project.updated', actor, next.updatedAt, project);
        return project;
      });
    },

    async deleteProject(workspaceId, id, expectedVersion, actor) {
      return write(async () => {
        const current = await currentRow(workspaceId, id, expectedVersion);
        const { taskCount } = (await countTasks.object({ workspaceId, id }))!;
        if (taskCount > 0) throw new ProjectHasTasksError(id, taskCount);
        await remove.run({ workspaceId, id });
        const project = toProject(current);
        await outbox.record(workspaceId, 'project.deleted', actor, now(), project);
        return project;
      });
    },

    async listProjects(workspaceId, options) {
      const definition = checkListOptions(options, sortKeys);
      const after = options.after ?? null;
      const statement = listStatement(`${options.sort}:${options.order}:${after ? 'after' : 'first'}`, () =>
        prepareList(definition, options.order, after !== null),
      );
      const rows = await engine.read(() => statement({ workspaceId, limit: options.limit + 1, afterKey: after?.key, afterId: after?.id }));
      return toPageOfKeysetRows(rows, options.limit, listedProject);
    },
  };
}
