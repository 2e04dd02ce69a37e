// Projects of the Work-Platform API, a versioned resource (versionedResources.ts). A project that
// has tasks cannot be deleted.
import type { components } from '../../generated/work-platform/types.js';
import { sortFields } from '../../generated/work-platform/rules.js';
import { projects, projectStatuses, storageLimits, tasks, type ProjectStatus } from '../../db/schema.js';
import { engineOf, type StoreSource } from './engine.js';
import { defaultRandomBytes, newId } from './ids.js';
import type { KeysetListOptions, SortKeyDefinition } from './keysetPages.js';
import { referenceCounter, versionedResource, type VersionedResourceOptions, type VersionedStore } from './versionedResources.js';
import { checkText, formatTimestamp, type ConstraintFields } from './workPlatformValues.js';
import { InvalidValueError, ProjectHasTasksError } from './workPlatformErrors.js';

export { projectStatuses, type ProjectStatus };

/** A project exactly as the API returns it, and what creating and changing one take: the contract's schemas. */
export type Project = components['schemas']['Project'];
export type CreateProjectInput = components['schemas']['ProjectCreate'];
export type UpdateProjectInput = components['schemas']['ProjectUpdate'];

/** The fields the list sorts by: the contract's `ProjectSort` parameter. */
export const projectSorts = sortFields.ProjectSort;
export type ProjectSort = (typeof projectSorts)[number];

export type ProjectStoreOptions = VersionedResourceOptions;

/** Deleting a project that has tasks is a ProjectHasTasksError. */
export type ProjectStore = VersionedStore<'Project', 'Projects', Project, CreateProjectInput, UpdateProjectInput, KeysetListOptions<ProjectSort>>;

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
  const engine = engineOf(source);
  const resource = versionedResource(engine, { table: projects, entity: 'project', constraintFields, toItem: toProject, sortKeys, filters: {} }, options);
  const countTasks = referenceCounter(engine, tasks, tasks.projectId);

  return {
    async createProject(workspaceId, input, actor) {
      if (input.name === undefined) throw new InvalidValueError('name', 'is required.');
      checkProjectValues(input);
      const at = resource.now();
      return resource.create(
        {
          id: newId('prj', options.randomBytes ?? defaultRandomBytes),
          workspaceId,
          name: input.name,
          description: input.description ?? null,
          status: input.status ?? 'ACTIVE',
          version: 1,
          createdAt: at,
          updatedAt: at,
        },
        actor,
      );
    },

    getProject: resource.get,

    async updateProject(workspaceId, id, patch, expectedVersion, actor) {
      checkProjectValues(patch);
      return resource.update(workspaceId, id, expectedVersion, actor, {
        apply: (current) => ({
          ...current,
          name: patch.name ?? current.name,
          description: patch.description === undefined ? current.description : patch.description,
          status: patch.status ?? current.status,
        }),
        fields: ['name', 'description', 'status'],
      });
    },

    async deleteProject(workspaceId, id, expectedVersion, actor) {
      return resource.delete(workspaceId, id, expectedVersion, actor, {
        async check() {
          const taskCount = await countTasks(workspaceId, id);
          if (taskCount > 0) throw new ProjectHasTasksError(id, taskCount);
        },
      });
    },

    listProjects: resource.list,
  };
}
