// Generated from specs/work-platform by npm run build:contract — do not edit.

/** Every operation of the API, by operationId. */
export type OperationId = 'listTasks' | 'createTask' | 'getTask' | 'updateTask' | 'deleteTask' | 'listProjects' | 'createProject' | 'getProject' | 'updateProject' | 'deleteProject' | 'listCompanies' | 'createCompany' | 'getCompany' | 'updateCompany' | 'deleteCompany' | 'listContacts' | 'createContact' | 'getContact' | 'updateContact' | 'deleteContact' | 'listDeals' | 'createDeal' | 'getDeal' | 'updateDeal' | 'deleteDeal' | 'getWorkspaceLimits' | 'getTaskThroughput' | 'getTaskCycleTime' | 'getOverdueTasks' | 'getDealPipeline' | 'listWebhooks' | 'createWebhook' | 'getWebhook' | 'updateWebhook' | 'deleteWebhook' | 'rotateWebhookKey' | 'replayWebhookEvents' | 'listWebhookDeliveries' | 'draftTasks' | 'summarizeProject' | 'getOpenapiJson' | 'getOpenapiYaml' | 'getPostmanCollection' | 'getPostmanEnvironment' | 'getChangelogJson';

/** Operations declared with `security: []`: their handlers get no caller. */
export type PublicOperationId = 'getOpenapiJson' | 'getOpenapiYaml' | 'getPostmanCollection' | 'getPostmanEnvironment' | 'getChangelogJson';

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
  'listCompanies',
  'createCompany',
  'getCompany',
  'updateCompany',
  'deleteCompany',
  'listContacts',
  'createContact',
  'getContact',
  'updateContact',
  'deleteContact',
  'listDeals',
  'createDeal',
  'getDeal',
  'updateDeal',
  'deleteDeal',
  'getWorkspaceLimits',
  'getTaskThroughput',
  'getTaskCycleTime',
  'getOverdueTasks',
  'getDealPipeline',
  'listWebhooks',
  'createWebhook',
  'getWebhook',
  'updateWebhook',
  'deleteWebhook',
  'rotateWebhookKey',
  'replayWebhookEvents',
  'listWebhookDeliveries',
  'draftTasks',
  'summarizeProject',
  'getOpenapiJson',
  'getOpenapiYaml',
  'getPostmanCollection',
  'getPostmanEnvironment',
  'getChangelogJson',
] as const;

/** Every scope the security schemes declare (`x-scopes`, OAuth 2.0 flows' `scopes`). */
export const scopeCatalogue = [
  'tasks:read',
  'tasks:write',
  'projects:read',
  'projects:write',
  'workspace:read',
  'webhooks:manage',
  'ai:use',
  'crm:read',
  'crm:write',
  'analytics:read',
] as const;

export type Scope = (typeof scopeCatalogue)[number];

/** What each scope allows, as the security schemes word it (the OAuth consent page shows it). */
export const scopeDescriptions: Readonly<Record<Scope, string>> = {
  "tasks:read": "Read tasks.",
  "tasks:write": "Create, change and delete tasks.",
  "projects:read": "Read projects.",
  "projects:write": "Create, change and delete projects.",
  "workspace:read": "Read the workspace's limits and usage.",
  "webhooks:manage": "Create, change, rotate, replay and delete webhook subscriptions, and read their delivery log.",
  "ai:use": "Call the AI routes; each call is charged against the workspace's daily AI spend cap.",
  "crm:read": "Read companies, contacts and deals.",
  "crm:write": "Create, change and delete companies, contacts and deals.",
  "analytics:read": "Read aggregates of the workspace's tasks and deals (counts, cycle times, pipeline value)."
};

/** The event types of the `webhooks` section. */
export const eventTypes = [
  'task.created',
  'task.updated',
  'task.completed',
  'task.deleted',
  'project.created',
  'project.updated',
  'project.deleted',
  'company.created',
  'company.updated',
  'company.deleted',
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'deal.created',
  'deal.updated',
  'deal.stage_changed',
  'deal.deleted',
] as const;

export type EventType = (typeof eventTypes)[number];

/** The fields each `sort` parameter component allows, in the order the spec lists them. */
export const sortFields = {
  TaskSort: [
    "createdAt",
    "updatedAt",
    "dueOn",
    "priority",
    "title"
  ],
  ProjectSort: [
    "createdAt",
    "updatedAt",
    "name"
  ],
  CompanySort: [
    "createdAt",
    "updatedAt",
    "name"
  ],
  ContactSort: [
    "createdAt",
    "updatedAt",
    "name"
  ],
  DealSort: [
    "createdAt",
    "updatedAt",
    "title",
    "amountMinor"
  ]
} as const;

/** The plan table (`x-rate-limits`): allowances per class and plan, quotas, tiers, the webhook retry schedule. */
export const planLimitTable = {
  "windowMs": 60000,
  "tiers": {
    "free": "free",
    "pro": "pro",
    "team": "pro",
    "business": "pro",
    "enterprise": "enterprise"
  },
  "requestsPerMinute": {
    "read": {
      "free": 300,
      "pro": 1200,
      "team": 1200,
      "business": 1200,
      "enterprise": 6000
    },
    "write": {
      "free": 60,
      "pro": 300,
      "team": 300,
      "business": 300,
      "enterprise": 1500
    },
    "ai": {
      "free": 20,
      "pro": 60,
      "team": 60,
      "business": 60,
      "enterprise": 300
    }
  },
  "monthlyQuota": {
    "free": 10000,
    "pro": 100000,
    "team": 250000,
    "business": 1000000,
    "enterprise": null
  },
  "aiDailySpendCapCents": {
    "free": 500,
    "pro": 5000,
    "team": 20000,
    "business": 100000,
    "enterprise": null
  },
  "webhookRetryDelaysSeconds": [
    30,
    120,
    600,
    1800,
    7200,
    28800,
    86400
  ]
} as const;

/** The plans of `x-rate-limits` (the keys of its `tiers`). */
export const plans = [
  'free',
  'pro',
  'team',
  'business',
  'enterprise',
] as const;

export type Plan = (typeof plans)[number];

/** The rate-limit classes of `x-rate-limits` (the keys of its `requestsPerMinute`): what `x-ratelimit-class` may name. */
export const rateLimitClasses = [
  'read',
  'write',
  'ai',
] as const;

export type RateLimitClass = (typeof rateLimitClasses)[number];

/** The tiers plans report in `X-RateLimit-Tier` (the values of `x-rate-limits.tiers`). */
export const rateLimitTiers = [
  'free',
  'pro',
  'enterprise',
] as const;

export type RateLimitTier = (typeof rateLimitTiers)[number];

/** The string enums of the component schemas: `Schema` for an enum schema, `Schema.member` for an enum member. */
export const enumValues = {
  "ValidationIssue.code": [
    "required",
    "invalid_type",
    "invalid_enum_value",
    "too_small",
    "too_big",
    "invalid_format",
    "unrecognized_keys",
    "invalid_cursor"
  ],
  "RateLimitProblemMember.class": [
    "read",
    "write",
    "ai"
  ],
  "RateLimitProblemMember.tier": [
    "free",
    "pro",
    "enterprise"
  ],
  TaskStatus: [
    "TODO",
    "IN_PROGRESS",
    "BLOCKED",
    "DONE"
  ],
  TaskPriority: [
    "LOW",
    "MEDIUM",
    "HIGH"
  ],
  "Project.status": [
    "ACTIVE",
    "ARCHIVED"
  ],
  "ProjectCreate.status": [
    "ACTIVE",
    "ARCHIVED"
  ],
  "ProjectUpdate.status": [
    "ACTIVE",
    "ARCHIVED"
  ],
  DealStage: [
    "lead",
    "qualified",
    "proposal",
    "negotiation",
    "won",
    "lost"
  ],
  AnalyticsBucketSize: [
    "day",
    "week",
    "month"
  ],
  "WorkspaceLimits.plan": [
    "free",
    "pro",
    "team",
    "business",
    "enterprise"
  ],
  "WorkspaceLimits.tier": [
    "free",
    "pro",
    "enterprise"
  ],
  WebhookEventType: [
    "task.created",
    "task.updated",
    "task.completed",
    "task.deleted",
    "project.created",
    "project.updated",
    "project.deleted",
    "company.created",
    "company.updated",
    "company.deleted",
    "contact.created",
    "contact.updated",
    "contact.deleted",
    "deal.created",
    "deal.updated",
    "deal.stage_changed",
    "deal.deleted"
  ],
  "WebhookFields.status": [
    "ACTIVE",
    "DISABLED"
  ],
  "WebhookDisabledReason.code": [
    "GONE",
    "FAILING",
    "MANUAL"
  ],
  "WebhookUpdate.status": [
    "ACTIVE",
    "DISABLED"
  ],
  WebhookDeliveryStatus: [
    "PENDING",
    "SUCCEEDED",
    "FAILED",
    "CANCELLED"
  ]
} as const;

/** `maxLength` of the string members of the component schemas, by schema and member. */
export const maxLengths = {
  Task: {
    title: 200
  },
  Project: {
    name: 120,
    description: 2000
  },
  Company: {
    name: 200,
    domain: 253,
    description: 2000
  },
  Contact: {
    name: 200,
    email: 254,
    phone: 40
  },
  Deal: {
    title: 200
  },
  WebhookCreate: {
    url: 2048,
    description: 500
  },
  WebhookUpdate: {
    url: 2048,
    description: 500
  },
  AiTaskDraftRequest: {
    text: 8000
  },
  AiTaskDraft: {
    title: 200
  },
  AiProjectSummary: {
    summary: 4000
  }
} as const;
