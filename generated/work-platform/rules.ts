// Generated from specs/work-platform by npm run build:contract — do not edit.

/** Every operation of the API, by operationId. */
export type OperationId = 'listTasks' | 'createTask' | 'getTask' | 'updateTask' | 'deleteTask' | 'listProjects' | 'createProject' | 'getProject' | 'updateProject' | 'deleteProject' | 'listCompanies' | 'createCompany' | 'getCompany' | 'updateCompany' | 'deleteCompany' | 'listContacts' | 'createContact' | 'getContact' | 'updateContact' | 'deleteContact' | 'listDeals' | 'createDeal' | 'getDeal' | 'updateDeal' | 'deleteDeal' | 'listContracts' | 'createContract' | 'getContract' | 'updateContract' | 'deleteContract' | 'sendContract' | 'signContract' | 'declineContract' | 'withdrawContract' | 'listConnectorKinds' | 'listConnectors' | 'createConnector' | 'importIssues' | 'connectConnector' | 'disconnectConnector' | 'getConnector' | 'deleteConnector' | 'getWorkspaceLimits' | 'getTaskThroughput' | 'getTaskCycleTime' | 'getOverdueTasks' | 'getDealPipeline' | 'listWebhooks' | 'createWebhook' | 'getWebhook' | 'updateWebhook' | 'deleteWebhook' | 'rotateWebhookKey' | 'replayWebhookEvents' | 'listWebhookDeliveries' | 'draftTasks' | 'summarizeProject' | 'getOpenapiJson' | 'getOpenapiYaml' | 'getPostmanCollection' | 'getPostmanEnvironment' | 'getChangelogJson' | 'getReferencePage';

/** Operations declared with `security: []`: their handlers get no caller. */
export type PublicOperationId = 'getOpenapiJson' | 'getOpenapiYaml' | 'getPostmanCollection' | 'getPostmanEnvironment' | 'getChangelogJson' | 'getReferencePage';

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
  'listContracts',
  'createContract',
  'getContract',
  'updateContract',
  'deleteContract',
  'sendContract',
  'signContract',
  'declineContract',
  'withdrawContract',
  'listConnectorKinds',
  'listConnectors',
  'createConnector',
  'importIssues',
  'connectConnector',
  'disconnectConnector',
  'getConnector',
  'deleteConnector',
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
  'getReferencePage',
] as const;

/** `x-ratelimit-cost` of the operations that declare one (every other call counts 1 unit): expensive calls, run apart with a concurrency cap per workspace. */
export const rateLimitCosts: Readonly<Partial<Record<OperationId, number>>> = {
  getTaskThroughput: 5,
  getTaskCycleTime: 10,
  getOverdueTasks: 20,
  getDealPipeline: 5
};

/** The instance path of what each create operation makes (it declares `Location` on its 201): the handler fills in the id. */
export const createdLocations: Readonly<Partial<Record<OperationId, string>>> = {
  createTask: "/v1/tasks/{taskId}",
  createProject: "/v1/projects/{projectId}",
  createCompany: "/v1/companies/{companyId}",
  createContact: "/v1/contacts/{contactId}",
  createDeal: "/v1/deals/{dealId}",
  createContract: "/v1/contracts/{contractId}",
  createConnector: "/v1/connectors/{connectorId}",
  createWebhook: "/v1/webhooks/{webhookId}"
};

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
  'contracts:read',
  'contracts:write',
  'connectors:read',
  'connectors:manage',
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
  "contracts:read": "Read contracts.",
  "contracts:write": "Create, change, send, sign, decline, withdraw and delete contracts.",
  "connectors:read": "See the workspace's connectors and their status (never their credentials), and import through them with tasks:write.",
  "connectors:manage": "Create, connect, disconnect and delete the workspace's connectors, giving them credentials for outside services.",
  "analytics:read": "Read aggregates of the workspace's tasks and deals (counts, cycle times, pipeline value)."
};

/** The roles a user of a workspace may have (the keys of `x-role-scopes`). */
export const roles = [
  'owner',
  'admin',
  'member',
] as const;

export type Role = (typeof roles)[number];

/** `x-role-scopes`: the scopes each role may hold. A token carries, and a call of it may use, only the scopes its user's role has. */
export const roleScopes: Readonly<Record<Role, readonly Scope[]>> = {
  owner: [
    "tasks:read",
    "tasks:write",
    "projects:read",
    "projects:write",
    "workspace:read",
    "webhooks:manage",
    "ai:use",
    "crm:read",
    "crm:write",
    "contracts:read",
    "contracts:write",
    "connectors:read",
    "connectors:manage",
    "analytics:read"
  ],
  admin: [
    "tasks:read",
    "tasks:write",
    "projects:read",
    "projects:write",
    "workspace:read",
    "webhooks:manage",
    "ai:use",
    "crm:read",
    "crm:write",
    "contracts:read",
    "contracts:write",
    "connectors:read",
    "connectors:manage",
    "analytics:read"
  ],
  member: [
    "tasks:read",
    "tasks:write",
    "projects:read",
    "projects:write",
    "ai:use",
    "crm:read",
    "crm:write",
    "contracts:read",
    "contracts:write",
    "connectors:read",
    "analytics:read"
  ]
};

/** `x-required-roles` of the operations that declare one: only these roles may call them (every other operation is open to every role). */
export const requiredRoles: Readonly<Partial<Record<OperationId, readonly Role[]>>> = {
  createConnector: [
    "owner",
    "admin"
  ],
  connectConnector: [
    "owner",
    "admin"
  ],
  disconnectConnector: [
    "owner",
    "admin"
  ],
  deleteConnector: [
    "owner",
    "admin"
  ],
  getWorkspaceLimits: [
    "owner",
    "admin"
  ],
  listWebhooks: [
    "owner",
    "admin"
  ],
  createWebhook: [
    "owner",
    "admin"
  ],
  getWebhook: [
    "owner",
    "admin"
  ],
  updateWebhook: [
    "owner",
    "admin"
  ],
  deleteWebhook: [
    "owner",
    "admin"
  ],
  rotateWebhookKey: [
    "owner",
    "admin"
  ],
  replayWebhookEvents: [
    "owner",
    "admin"
  ],
  listWebhookDeliveries: [
    "owner",
    "admin"
  ]
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
  'contract.created',
  'contract.updated',
  'contract.deleted',
  'contract.sent',
  'contract.signed',
  'contract.declined',
  'contract.withdrawn',
  'contract.expired',
  'connector.created',
  'connector.connected',
  'connector.expired',
  'connector.disconnected',
  'connector.deleted',
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
  ],
  ContractSort: [
    "createdAt",
    "updatedAt",
    "title",
    "expiresOn"
  ],
  ConnectorSort: [
    "createdAt",
    "updatedAt",
    "name"
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
  CurrencyCode: [
    "AED",
    "AFN",
    "ALL",
    "AMD",
    "ANG",
    "AOA",
    "ARS",
    "AUD",
    "AWG",
    "AZN",
    "BAM",
    "BBD",
    "BDT",
    "BGN",
    "BHD",
    "BIF",
    "BMD",
    "BND",
    "BOB",
    "BOV",
    "BRL",
    "BSD",
    "BTN",
    "BWP",
    "BYN",
    "BZD",
    "CAD",
    "CDF",
    "CHE",
    "CHF",
    "CHW",
    "CLF",
    "CLP",
    "CNY",
    "COP",
    "COU",
    "CRC",
    "CUC",
    "CUP",
    "CVE",
    "CZK",
    "DJF",
    "DKK",
    "DOP",
    "DZD",
    "EGP",
    "ERN",
    "ETB",
    "EUR",
    "FJD",
    "FKP",
    "GBP",
    "GEL",
    "GHS",
    "GIP",
    "GMD",
    "GNF",
    "GTQ",
    "GYD",
    "HKD",
    "HNL",
    "HTG",
    "HUF",
    "IDR",
    "ILS",
    "INR",
    "IQD",
    "IRR",
    "ISK",
    "JMD",
    "JOD",
    "JPY",
    "KES",
    "KGS",
    "KHR",
    "KMF",
    "KPW",
    "KRW",
    "KWD",
    "KYD",
    "KZT",
    "LAK",
    "LBP",
    "LKR",
    "LRD",
    "LSL",
    "LYD",
    "MAD",
    "MDL",
    "MGA",
    "MKD",
    "MMK",
    "MNT",
    "MOP",
    "MRU",
    "MUR",
    "MVR",
    "MWK",
    "MXN",
    "MXV",
    "MYR",
    "MZN",
    "NAD",
    "NGN",
    "NIO",
    "NOK",
    "NPR",
    "NZD",
    "OMR",
    "PAB",
    "PEN",
    "PGK",
    "PHP",
    "PKR",
    "PLN",
    "PYG",
    "QAR",
    "RON",
    "RSD",
    "RUB",
    "RWF",
    "SAR",
    "SBD",
    "SCR",
    "SDG",
    "SEK",
    "SGD",
    "SHP",
    "SLE",
    "SOS",
    "SRD",
    "SSP",
    "STN",
    "SVC",
    "SYP",
    "SZL",
    "THB",
    "TJS",
    "TMT",
    "TND",
    "TOP",
    "TRY",
    "TTD",
    "TWD",
    "TZS",
    "UAH",
    "UGX",
    "USD",
    "USN",
    "UYI",
    "UYU",
    "UYW",
    "UZS",
    "VED",
    "VES",
    "VND",
    "VUV",
    "WST",
    "XAF",
    "XAG",
    "XAU",
    "XBA",
    "XBB",
    "XBC",
    "XBD",
    "XCD",
    "XDR",
    "XOF",
    "XPD",
    "XPF",
    "XPT",
    "XSU",
    "XTS",
    "XUA",
    "XXX",
    "YER",
    "ZAR",
    "ZMW",
    "ZWG"
  ],
  ContractStatus: [
    "draft",
    "sent",
    "signed",
    "declined",
    "expired"
  ],
  ConnectorKindId: [
    "github"
  ],
  ConnectorStatus: [
    "not_connected",
    "connected",
    "expired",
    "disconnected"
  ],
  "IssueImportRequest.state": [
    "open",
    "all"
  ],
  "IssueImport.state": [
    "open",
    "all"
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
    "deal.deleted",
    "contract.created",
    "contract.updated",
    "contract.deleted",
    "contract.sent",
    "contract.signed",
    "contract.declined",
    "contract.withdrawn",
    "contract.expired",
    "connector.created",
    "connector.connected",
    "connector.expired",
    "connector.disconnected",
    "connector.deleted"
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

/** The problem types (`x-problem-types` of the Problem schema): status, fixed title and when each is answered, by slug. */
export const problemTypes = {
  "bad-request": {
    "status": 400,
    "title": "Bad request",
    "when": "A malformed parameter, header or body (`invalid-json`, `malformed-request`, …)."
  },
  "unauthenticated": {
    "status": 401,
    "title": "Authentication required",
    "when": "No token, or one that is unknown, revoked or expired."
  },
  "token-expired": {
    "status": 401,
    "title": "Session token expired",
    "when": "A genuine session token past its expiry: refresh it."
  },
  "insufficient-scope": {
    "status": 403,
    "title": "Insufficient scope",
    "when": "The token lacks a scope: `requiredScopes`, `grantedScopes`."
  },
  "insufficient-role": {
    "status": 403,
    "title": "Insufficient role",
    "when": "The caller's role may not call this operation: `requiredRoles`, `heldRoles`."
  },
  "forbidden": {
    "status": 403,
    "title": "Forbidden",
    "when": "A browser `Origin` that is not allowed, or another refusal (see `code`)."
  },
  "not-found": {
    "status": 404,
    "title": "Not found",
    "when": "No such resource in your workspace, or no such route."
  },
  "method-not-allowed": {
    "status": 405,
    "title": "Method not allowed",
    "when": "The path exists; `Allow` lists its methods."
  },
  "request-timeout": {
    "status": 408,
    "title": "Request timeout",
    "when": "The request was not sent whole in time; the connection is closed."
  },
  "conflict": {
    "status": 409,
    "title": "Conflict",
    "when": "`version-conflict`, a dependent resource, a key in use, … (see `code`)."
  },
  "payload-too-large": {
    "status": 413,
    "title": "Payload too large",
    "when": "The body is over 1 MiB."
  },
  "unsupported-media-type": {
    "status": 415,
    "title": "Unsupported media type",
    "when": "A body that is not `application/json`."
  },
  "validation": {
    "status": 422,
    "title": "Validation failed",
    "when": "The body or a cursor is invalid: one entry per field in `errors`."
  },
  "precondition-required": {
    "status": 428,
    "title": "Precondition required",
    "when": "`If-Match` is required on this change."
  },
  "rate-limited": {
    "status": 429,
    "title": "Rate limit exceeded",
    "when": "Per-minute allowance used up (`rateLimit`), or the concurrency cap of expensive calls met (`code`): `Retry-After`."
  },
  "quota-exceeded": {
    "status": 429,
    "title": "Monthly quota exceeded",
    "when": "The plan's monthly calls are used up: `quota`."
  },
  "ai-spend-cap-exceeded": {
    "status": 429,
    "title": "Daily AI spend cap reached",
    "when": "The workspace's AI spend today reached its cap: `aiSpend`."
  },
  "request-header-fields-too-large": {
    "status": 431,
    "title": "Request header fields too large",
    "when": "Headers over the server's limit; the connection is closed."
  },
  "internal": {
    "status": 500,
    "title": "Internal server error",
    "when": "Our fault; quote `requestId`."
  },
  "ai-provider-error": {
    "status": 502,
    "title": "AI provider error",
    "when": "The AI provider failed or answered unusably."
  },
  "unavailable": {
    "status": 503,
    "title": "Service unavailable",
    "when": "The database stayed busy; retry after `Retry-After`."
  },
  "ai-provider-timeout": {
    "status": 504,
    "title": "AI provider timeout",
    "when": "The AI provider did not answer in time."
  },
  "connector-provider-error": {
    "status": 502,
    "title": "Connector provider error",
    "when": "The connected service failed or answered unusably (never its wording, address or credential)."
  },
  "connector-provider-timeout": {
    "status": 504,
    "title": "Connector provider timeout",
    "when": "The connected service did not answer in time."
  }
} as const;
export type ProblemSlug = keyof typeof problemTypes;

/** `maxLength` of the string members of the component schemas, by schema and member. */
export const maxLengths = {
  Task: {
    title: 200
  },
  TaskCreate: {
    title: 200
  },
  TaskUpdate: {
    title: 200
  },
  Project: {
    name: 120,
    description: 2000
  },
  ProjectCreate: {
    name: 120,
    description: 2000
  },
  ProjectUpdate: {
    name: 120,
    description: 2000
  },
  Company: {
    name: 200,
    domain: 253,
    description: 2000
  },
  CompanyCreate: {
    name: 200,
    domain: 253,
    description: 2000
  },
  CompanyUpdate: {
    name: 200,
    domain: 253,
    description: 2000
  },
  Contact: {
    name: 200,
    email: 254,
    phone: 40
  },
  ContactCreate: {
    name: 200,
    email: 254,
    phone: 40
  },
  ContactUpdate: {
    name: 200,
    email: 254,
    phone: 40
  },
  Deal: {
    title: 200
  },
  DealCreate: {
    title: 200
  },
  DealUpdate: {
    title: 200
  },
  Contract: {
    title: 200,
    body: 20000
  },
  ContractCreate: {
    title: 200,
    body: 20000
  },
  ContractUpdate: {
    title: 200,
    body: 20000
  },
  Connector: {
    name: 120
  },
  ConnectorCreate: {
    name: 120
  },
  ConnectorConnection: {
    token: 1000
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
