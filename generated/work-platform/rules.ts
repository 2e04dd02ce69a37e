// Generated from specs/work-platform by npm run build:contract — do not edit.

/** Every operation of the API, by operationId. */
export type OperationId = 'listTasks' | 'createTask' | 'getTask' | 'updateTask' | 'deleteTask' | 'listProjects' | 'createProject' | 'getProject' | 'updateProject' | 'deleteProject' | 'getWorkspaceLimits' | 'listWebhooks' | 'createWebhook' | 'getWebhook' | 'updateWebhook' | 'deleteWebhook' | 'rotateWebhookKey' | 'replayWebhookEvents' | 'listWebhookDeliveries' | 'getOpenapiJson' | 'getOpenapiYaml' | 'getPostmanCollection' | 'getPostmanEnvironment';

/** Operations declared with `security: []`: their handlers get no caller. */
export type PublicOperationId = 'getOpenapiJson' | 'getOpenapiYaml' | 'getPostmanCollection' | 'getPostmanEnvironment';

/** Every operationId, in the order of the spec. */
export const operationIds = [
  'listTasks',
  'createTask',
  'getTask',
  'updateTask',
  'deleteTask',
  'listProjects',
  'createProject',
  'getProject',
  'updateProject',
  'deleteProject',
  'getWorkspaceLimits',
  'listWebhooks',
  'createWebhook',
  'getWebhook',
  'updateWebhook',
  'deleteWebhook',
  'rotateWebhookKey',
  'replayWebhookEvents',
  'listWebhookDeliveries',
  'getOpenapiJson',
  'getOpenapiYaml',
  'getPostmanCollection',
  'getPostmanEnvironment',
] as const;

/** Every scope the security schemes declare (`x-scopes`, OAuth 2.0 flows' `scopes`). */
export const scopeCatalogue = [
  'tasks:read',
  'tasks:write',
  'projects:read',
  'projects:write',
  'workspace:read',
  'webhooks:manage',
] as const;

export type Scope = (typeof scopeCatalogue)[number];

/** The event types of the `webhooks` section. */
export const eventTypes = [
  'task.created',
  'task.updated',
  'task.completed',
  'task.deleted',
  'project.created',
  'project.updated',
  'project.deleted',
] as const;

export type EventType = (typeof eventTypes)[number];
