import type { WorkPlatformHandlers } from '../operationContext.js';
import { createProject } from './createProject.js';
import { createTask } from './createTask.js';
import { deleteProject } from './deleteProject.js';
import { deleteTask } from './deleteTask.js';
import { getOpenapiJson } from './getOpenapiJson.js';
import { getOpenapiYaml } from './getOpenapiYaml.js';
import { getPostmanCollection } from './getPostmanCollection.js';
import { getPostmanEnvironment } from './getPostmanEnvironment.js';
import { getProject } from './getProject.js';
import { getTask } from './getTask.js';
import { getWorkspaceLimits } from './getWorkspaceLimits.js';
import { listProjects } from './listProjects.js';
import { listTasks } from './listTasks.js';
import { updateProject } from './updateProject.js';
import { updateTask } from './updateTask.js';

/** Handlers by operationId; start-up refuses a contract operation that has none. */
export const workPlatformOperations: WorkPlatformHandlers = {
  listTasks,
  createTask,
  getTask,
  updateTask,
  deleteTask,
  listProjects,
  createProject,
  getProject,
  updateProject,
  deleteProject,
  getWorkspaceLimits,
  getOpenapiJson,
  getOpenapiYaml,
  getPostmanCollection,
  getPostmanEnvironment,
};
