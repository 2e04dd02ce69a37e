import type { WorkPlatformHandlers } from '../operationContext.js';
import { createProject } from './createProject.js';
import { createTask } from './createTask.js';
import { createWebhook } from './createWebhook.js';
import { deleteProject } from './deleteProject.js';
import { deleteTask } from './deleteTask.js';
import { deleteWebhook } from './deleteWebhook.js';
import { getOpenapiJson } from './getOpenapiJson.js';
import { getOpenapiYaml } from './getOpenapiYaml.js';
import { getPostmanCollection } from './getPostmanCollection.js';
import { getPostmanEnvironment } from './getPostmanEnvironment.js';
import { getProject } from './getProject.js';
import { getTask } from './getTask.js';
import { getWebhook } from './getWebhook.js';
import { getWorkspaceLimits } from './getWorkspaceLimits.js';
import { listProjects } from './listProjects.js';
import { listTasks } from './listTasks.js';
import { listWebhookDeliveries } from './listWebhookDeliveries.js';
import { listWebhooks } from './listWebhooks.js';
import { replayWebhookEvents } from './replayWebhookEvents.js';
import { rotateWebhookKey } from './rotateWebhookKey.js';
import { updateProject } from './updateProject.js';
import { updateTask } from './updateTask.js';
import { updateWebhook } from './updateWebhook.js';

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
  listWebhooks,
  createWebhook,
  getWebhook,
  updateWebhook,
  deleteWebhook,
  rotateWebhookKey,
  replayWebhookEvents,
  listWebhookDeliveries,
  getWorkspaceLimits,
  getOpenapiJson,
  getOpenapiYaml,
  getPostmanCollection,
  getPostmanEnvironment,
};
