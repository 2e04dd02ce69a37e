// Drizzle schema of the server's SQLite database, and the one definition of its tables:
// db/postgres/schema.ts derives PostgreSQL's from it. `npm run db:generate` turns changes into SQL
// migrations under db/migrations/ and db/postgres/migrations/, which the server applies at start-up.
// Every timestamp is an integer number of milliseconds since the Unix epoch.
import { enumValues, maxLengths, plans, roles, type Plan } from '../generated/work-platform/rules.js';
import { sql } from 'drizzle-orm';
import { check, foreignKey, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

/** The content kinds a portfolio is made of; `credential` is served as `/education`. */
export const portfolioItemKinds = [
  'outcome',
  'post',
  'page',
  'experience',
  'skill',
  'stat',
  'award',
  'credential',
  'testimonial',
  'link',
] as const;
export type PortfolioItemKind = (typeof portfolioItemKinds)[number];

export const tenants = sqliteTable('tenants', {
  id: text('id').primaryKey(), // ten_…
  name: text('name').notNull(),
  createdAt: integer('created_at').notNull(),
});

export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: text('id').primaryKey(), // key_…
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    /** Lowercase hex SHA-256 of the whole key; the key itself is never stored. */
    keyHash: text('key_hash').notNull(),
    /** The first 12 characters of the key (`pfk_` and 8 more), for telling keys apart. */
    keyPrefix: text('key_prefix').notNull(),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at'),
    revokedAt: integer('revoked_at'),
    /** This key's own allowance per rate-limit window; null means the server default. */
    rateLimit: integer('rate_limit'),
  },
  (table) => [
    uniqueIndex('api_keys_key_hash_unique').on(table.keyHash),
    index('api_keys_tenant_id_idx').on(table.tenantId),
    check('api_keys_rate_limit_positive', sql`${table.rateLimit} IS NULL OR ${table.rateLimit} >= 1`),
  ],
);

/** Fixed-window request counters; the rate limiter owns their logic. */
export const rateLimitCounters = sqliteTable(
  'rate_limit_counters',
  {
    bucket: text('bucket').notNull(),
    windowStart: integer('window_start').notNull(),
    count: integer('count').notNull(),
  },
  (table) => [primaryKey({ columns: [table.bucket, table.windowStart] })],
);

/** One row per tenant that has imported a portfolio. */
export const portfolios = sqliteTable(
  'portfolios',
  {
    tenantId: text('tenant_id')
      .primaryKey()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    /** 1 when the portfolio is served at all; 0 makes every data operation answer 404. */
    published: integer('published').notNull(),
    /** The profile in import form (JSON). */
    profileSourceJson: text('profile_source_json').notNull(),
    /** The profile exactly as the API returns it (`ProfileItem` JSON). */
    profileRenderedJson: text('profile_rendered_json').notNull(),
    /** The whole `PortfolioResponse` JSON (published items only), rebuilt on every import. */
    documentJson: text('document_json').notNull(),
    updatedAt: integer('updated_at').notNull(),
    /**
     * Changes on every write of the row (two writes can share a millisecond, so updatedAt cannot
     * tell them apart); readers keep encoded answers for as long as it stays the same.
     */
    revision: integer('revision').notNull().default(0),
  },
  (table) => [check('portfolios_published_boolean', sql`${table.published} IN (0, 1)`)],
);

export const assets = sqliteTable(
  'assets',
  {
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id, { onDelete: 'cascade' }),
    id: text('id').notNull(), // ast_…
    /** Position in the imported `assets` array, so that export keeps the order. */
    position: integer('position').notNull(),
    url: text('url').notNull(),
    altText: text('alt_text').notNull(),
    mimeType: text('mime_type').notNull(),
    width: integer('width'),
    height: integer('height'),
  },
  (table) => [primaryKey({ columns: [table.tenantId, table.id] })],
);

export const portfolioItems = sqliteTable(
  'portfolio_items',
  {
    tenantId: text('tenant_id').notNull(),
    kind: text('kind', { enum: portfolioItemKinds }).notNull(),
    /** Display order within (tenant, kind): the item's index in the imported array. */
    position: integer('position').notNull(),
    /** Public id of list-only kinds (exp_, skl_, sta_, awd_, crd_, tst_, lnk_); null for slug kinds. */
    id: text('id'),
    /** Slug of outcomes, posts and pages; null for list-only kinds. */
    slug: text('slug'),
    published: integer('published').notNull(),
    /** The item in import form, HTML already sanitized. */
    sourceJson: text('source_json').notNull(),
    /** The item exactly as the API returns it: sanitized, assets resolved. */
    renderedJson: text('rendered_json').notNull(),
    /** Pages only: the `PageSummary` form used by the list operation. */
    summaryJson: text('summary_json'),
  },
  (table) => [
    primaryKey({ columns: [table.tenantId, table.kind, table.position] }),
    foreignKey({ columns: [table.tenantId], foreignColumns: [portfolios.tenantId] }).onDelete('cascade'),
    uniqueIndex('portfolio_items_slug_unique').on(table.tenantId, table.kind, table.slug),
    uniqueIndex('portfolio_items_id_unique').on(table.tenantId, table.kind, table.id),
    index('portfolio_items_listing_idx').on(table.tenantId, table.kind, table.published, table.position),
    check('portfolio_items_published_boolean', sql`${table.published} IN (0, 1)`),
    check(
      'portfolio_items_kind_known',
      sql.raw(`"kind" IN (${portfolioItemKinds.map((kind) => `'${kind}'`).join(', ')})`),
    ),
  ],
);

// ─── Work-Platform API (/v1) ────────────────────────────────────────────────────────────────────

/** Plans a workspace can be on (the contract's `x-rate-limits`); the plan picks the default rate limits, quota and AI spend cap. */
export const workspacePlans = plans;
export type WorkspacePlan = Plan;

/** The roles of the spec's `x-role-scopes`. */
export const workspaceRoles = roles;
export type WorkspaceRole = (typeof workspaceRoles)[number];

export const projectStatuses = enumValues['Project.status'];
export type ProjectStatus = (typeof projectStatuses)[number];

export const taskStatuses = enumValues.TaskStatus;
export type TaskStatus = (typeof taskStatuses)[number];

/** In rank order: `priority_rank` is the 1-based position in this list. */
export const taskPriorities = enumValues.TaskPriority;
export type TaskPriority = (typeof taskPriorities)[number];

/**
 * Storage limits in characters (Unicode code points, as SQLite's length() counts them), as the
 * contract declares them (`maxLength` of the resource schemas); the CHECK constraints repeat them in SQL.
 */
export const storageLimits = {
  projectName: maxLengths.Project.name,
  projectDescription: maxLengths.Project.description,
  taskTitle: maxLengths.Task.title,
  companyName: maxLengths.Company.name,
  companyDomain: maxLengths.Company.domain,
  companyDescription: maxLengths.Company.description,
  contactName: maxLengths.Contact.name,
  contactEmail: maxLengths.Contact.email,
  contactPhone: maxLengths.Contact.phone,
  dealTitle: maxLengths.Deal.title,
} as const;

/** The stages of a CRM deal (the contract's `DealStage`). */
export const dealStages = enumValues.DealStage;
export type DealStage = (typeof dealStages)[number];

/**
 * What `due_on` sorts as when it is null: Number.MAX_SAFE_INTEGER, after every real date, so that
 * nulls come last in ascending order and first in descending order. The dueOn index and the keyset
 * predicate both use coalesce(due_on, this).
 */
export const dueOnNullSortKey = Number.MAX_SAFE_INTEGER;

/**
 * coalesce(due_on, dueOnNullSortKey), spelled without a comma: drizzle-kit splits index
 * expressions at commas. Queries must use this exact expression for SQLite to use the index.
 */
export const dueOnSortExpressionText = `CASE WHEN "due_on" IS NULL THEN ${dueOnNullSortKey} ELSE "due_on" END`;
const dueOnSortExpression = sql.raw(dueOnSortExpressionText);

export const inList = (column: string, values: readonly string[]) =>
  sql.raw(`"${column}" IN (${values.map((value) => `'${value}'`).join(', ')})`);

/** The tenant of the Work-Platform API. Null override columns mean "the plan's value". */
export const workspaces = sqliteTable(
  'workspaces',
  {
    id: text('id').primaryKey(), // ten_…
    name: text('name').notNull(),
    plan: text('plan', { enum: workspacePlans }).notNull(),
    readPerMinuteOverride: integer('read_per_minute_override'),
    writePerMinuteOverride: integer('write_per_minute_override'),
    aiPerMinuteOverride: integer('ai_per_minute_override'),
    monthlyQuotaOverride: integer('monthly_quota_override'),
    aiDailySpendCapCentsOverride: integer('ai_daily_spend_cap_cents_override'),
    /** JSON array of whole seconds between webhook delivery attempts. */
    webhookRetryDelaysSecondsOverride: text('webhook_retry_delays_seconds_override'),
    createdAt: integer('created_at').notNull(),
  },
  (table) => [
    check('workspaces_plan_known', inList('plan', workspacePlans)),
    check('workspaces_name_not_empty', sql`length(${table.name}) >= 1`),
    check(
      'workspaces_overrides_in_range',
      sql`coalesce(${table.readPerMinuteOverride}, 1) >= 1 AND coalesce(${table.writePerMinuteOverride}, 1) >= 1
        AND coalesce(${table.aiPerMinuteOverride}, 1) >= 1 AND coalesce(${table.monthlyQuotaOverride}, 0) >= 0
        AND coalesce(${table.aiDailySpendCapCentsOverride}, 0) >= 0`,
    ),
  ],
);

export const users = sqliteTable(
  'users',
  {
    id: text('id').primaryKey(), // usr_…
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    role: text('role', { enum: workspaceRoles }).notNull(),
    name: text('name'),
    email: text('email'),
    createdAt: integer('created_at').notNull(),
    /** Session tokens issued before this time (ms) are refused: `session revoke` sets it. */
    sessionsValidAfter: integer('sessions_valid_after').notNull().default(0),
  },
  (table) => [
    // Target of the (workspace_id, user_id) foreign keys: a user is only ever used inside its workspace.
    uniqueIndex('users_workspace_id_id_unique').on(table.workspaceId, table.id),
    check('users_role_known', inList('role', workspaceRoles)),
  ],
);

export const personalAccessTokens = sqliteTable(
  'personal_access_tokens',
  {
    id: text('id').primaryKey(), // pat_…
    workspaceId: text('workspace_id').notNull(),
    userId: text('user_id').notNull(),
    /** Lowercase hex SHA-256 of the whole token; the token itself is never stored. */
    tokenHash: text('token_hash').notNull(),
    /** The first 12 characters of the token (`svc_pat_` and 4 more), for telling tokens apart. */
    tokenPrefix: text('token_prefix').notNull(),
    /** JSON array of scope names. */
    scopes: text('scopes').notNull(),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at'),
    revokedAt: integer('revoked_at'),
    /** Set when the token was revoked by rotation: the id of the token that replaced it. */
    rotatedTo: text('rotated_to'),
  },
  (table) => [
    uniqueIndex('personal_access_tokens_token_hash_unique').on(table.tokenHash),
    index('personal_access_tokens_workspace_id_idx').on(table.workspaceId, table.createdAt),
    foreignKey({ columns: [table.workspaceId, table.userId], foreignColumns: [users.workspaceId, users.id] }).onDelete('cascade'),
  ],
);

export const projects = sqliteTable(
  'projects',
  {
    id: text('id').primaryKey(), // prj_…
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    description: text('description'),
    status: text('status', { enum: projectStatuses }).notNull(),
    version: integer('version').notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [
    uniqueIndex('projects_workspace_id_id_unique').on(table.workspaceId, table.id),
    index('projects_created_at_idx').on(table.workspaceId, table.createdAt, table.id),
    index('projects_updated_at_idx').on(table.workspaceId, table.updatedAt, table.id),
    index('projects_name_idx').on(table.workspaceId, table.name, table.id),
    check('projects_name_length', sql.raw(`length("name") BETWEEN 1 AND ${storageLimits.projectName}`)),
    check(
      'projects_description_length',
      sql.raw(`"description" IS NULL OR length("description") <= ${storageLimits.projectDescription}`),
    ),
    check('projects_status_known', inList('status', projectStatuses)),
    check('projects_version_positive', sql`${table.version} >= 1`),
  ],
);

export const tasks = sqliteTable(
  'tasks',
  {
    id: text('id').primaryKey(), // tsk_…
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    projectId: text('project_id').notNull(),
    title: text('title').notNull(),
    status: text('status', { enum: taskStatuses }).notNull(),
    priority: text('priority', { enum: taskPriorities }).notNull(),
    /** 1 = LOW, 2 = MEDIUM, 3 = HIGH: what the priority sort orders by. Kept in step by a CHECK. */
    priorityRank: integer('priority_rank').notNull(),
    dueOn: integer('due_on'),
    assigneeId: text('assignee_id'),
    version: integer('version').notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    /**
     * When the task last moved to DONE (its creation time when created DONE); null while it is not
     * DONE. Set and cleared by the store in the same update as the status. Tasks that were DONE
     * before the column existed are backfilled from updated_at at open (backfillTaskCompletions).
     */
    completedAt: integer('completed_at'),
  },
  (table) => [
    // A task's project and assignee always belong to the task's own workspace. The project
    // reference is not cascaded: a project with tasks cannot be deleted.
    foreignKey({ columns: [table.workspaceId, table.projectId], foreignColumns: [projects.workspaceId, projects.id] }),
    foreignKey({ columns: [table.workspaceId, table.assigneeId], foreignColumns: [users.workspaceId, users.id] }),
    index('tasks_project_id_idx').on(table.workspaceId, table.projectId),
    index('tasks_assignee_id_idx').on(table.workspaceId, table.assigneeId),
    // One index per sort key, each ending in id: the keyset order (sort key, id).
    index('tasks_created_at_idx').on(table.workspaceId, table.createdAt, table.id),
    index('tasks_updated_at_idx').on(table.workspaceId, table.updatedAt, table.id),
    index('tasks_title_idx').on(table.workspaceId, table.title, table.id),
    index('tasks_priority_rank_idx').on(table.workspaceId, table.priorityRank, table.id),
    index('tasks_due_on_idx').on(table.workspaceId, dueOnSortExpression, table.id),
    // Analytics (src/store/analytics.ts): covering indexes, so an aggregate over a date range reads
    // the index alone. Completions per bucket and cycle times scan (workspace_id, completed_at);
    // overdue counts scan (workspace_id, due_on) and read creation, completion, priority and project beside it.
    index('tasks_completed_at_idx')
      .on(table.workspaceId, table.completedAt, table.createdAt, table.projectId)
      .where(sql`${table.completedAt} IS NOT NULL`),
    index('tasks_due_on_analytics_idx')
      .on(table.workspaceId, table.dueOn, table.completedAt, table.createdAt, table.priority, table.projectId)
      .where(sql`${table.dueOn} IS NOT NULL`),
    // Empty once every DONE task has its completed_at: it lets the backfill at open find the rows
    // left to fill without scanning the table.
    index('tasks_done_without_completed_at_idx')
      .on(table.workspaceId)
      .where(sql`${table.status} = 'DONE' AND ${table.completedAt} IS NULL`),
    check('tasks_title_length', sql.raw(`length("title") BETWEEN 1 AND ${storageLimits.taskTitle}`)),
    check('tasks_status_known', inList('status', taskStatuses)),
    check(
      'tasks_priority_rank_matches',
      sql.raw(taskPriorities.map((priority, index) => `("priority" = '${priority}' AND "priority_rank" = ${index + 1})`).join(' OR ')),
    ),
    check('tasks_version_positive', sql`${table.version} >= 1`),
  ],
);

// CRM: companies, contacts and deals. A contact's company and a deal's owner, company and
// contacts always belong to the row's own workspace (composite foreign keys on (workspace_id, id)).
// Each list sorts by an index (workspace_id, sort key, id); each list filter has an index that
// starts with (workspace_id, filter column).

export const nullableTextWithin = (column: string, limit: number) => sql.raw(`"${column}" IS NULL OR length("${column}") <= ${limit}`);

export const companies = sqliteTable(
  'companies',
  {
    id: text('id').primaryKey(), // cmp_…
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    domain: text('domain'),
    description: text('description'),
    version: integer('version').notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [
    uniqueIndex('companies_workspace_id_id_unique').on(table.workspaceId, table.id),
    index('companies_created_at_idx').on(table.workspaceId, table.createdAt, table.id),
    index('companies_updated_at_idx').on(table.workspaceId, table.updatedAt, table.id),
    index('companies_name_idx').on(table.workspaceId, table.name, table.id),
    check('companies_name_length', sql.raw(`length("name") BETWEEN 1 AND ${storageLimits.companyName}`)),
    check('companies_domain_length', nullableTextWithin('domain', storageLimits.companyDomain)),
    check('companies_description_length', nullableTextWithin('description', storageLimits.companyDescription)),
    check('companies_version_positive', sql`${table.version} >= 1`),
  ],
);

export const contacts = sqliteTable(
  'contacts',
  {
    id: text('id').primaryKey(), // ctc_…
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    email: text('email'),
    phone: text('phone'),
    companyId: text('company_id'),
    version: integer('version').notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [
    uniqueIndex('contacts_workspace_id_id_unique').on(table.workspaceId, table.id),
    foreignKey({ columns: [table.workspaceId, table.companyId], foreignColumns: [companies.workspaceId, companies.id] }),
    index('contacts_created_at_idx').on(table.workspaceId, table.createdAt, table.id),
    index('contacts_updated_at_idx').on(table.workspaceId, table.updatedAt, table.id),
    index('contacts_name_idx').on(table.workspaceId, table.name, table.id),
    index('contacts_company_id_idx').on(table.workspaceId, table.companyId, table.createdAt, table.id),
    check('contacts_name_length', sql.raw(`length("name") BETWEEN 1 AND ${storageLimits.contactName}`)),
    check('contacts_email_length', nullableTextWithin('email', storageLimits.contactEmail)),
    check('contacts_phone_length', nullableTextWithin('phone', storageLimits.contactPhone)),
    check('contacts_version_positive', sql`${table.version} >= 1`),
  ],
);

export const deals = sqliteTable(
  'deals',
  {
    id: text('id').primaryKey(), // del_…
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    title: text('title').notNull(),
    stage: text('stage', { enum: dealStages }).notNull(),
    amountMinor: integer('amount_minor').notNull(),
    currency: text('currency').notNull(),
    ownerId: text('owner_id').notNull(),
    companyId: text('company_id'),
    /** JSON array of contact ids, in the order given; deal_contacts holds the same pairs for the foreign keys. */
    contactIds: text('contact_ids').notNull(),
    /** YYYY-MM-DD, or null. */
    expectedCloseOn: text('expected_close_on'),
    version: integer('version').notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [
    uniqueIndex('deals_workspace_id_id_unique').on(table.workspaceId, table.id),
    foreignKey({ columns: [table.workspaceId, table.ownerId], foreignColumns: [users.workspaceId, users.id] }),
    foreignKey({ columns: [table.workspaceId, table.companyId], foreignColumns: [companies.workspaceId, companies.id] }),
    index('deals_created_at_idx').on(table.workspaceId, table.createdAt, table.id),
    index('deals_updated_at_idx').on(table.workspaceId, table.updatedAt, table.id),
    index('deals_title_idx').on(table.workspaceId, table.title, table.id),
    index('deals_amount_minor_idx').on(table.workspaceId, table.amountMinor, table.id),
    index('deals_stage_idx').on(table.workspaceId, table.stage, table.createdAt, table.id),
    index('deals_owner_id_idx').on(table.workspaceId, table.ownerId, table.createdAt, table.id),
    index('deals_company_id_idx').on(table.workspaceId, table.companyId, table.createdAt, table.id),
    // The pipeline analytics (src/store/analytics.ts) read deals created in a date range from this index alone.
    index('deals_pipeline_idx').on(table.workspaceId, table.createdAt, table.stage, table.currency, table.amountMinor, table.ownerId),
    check('deals_title_length', sql.raw(`length("title") BETWEEN 1 AND ${storageLimits.dealTitle}`)),
    check('deals_stage_known', inList('stage', dealStages)),
    check('deals_amount_minor_not_negative', sql`${table.amountMinor} >= 0`),
    check('deals_currency_code', sql.raw(`length("currency") = 3 AND upper("currency") = "currency"`)),
    check('deals_version_positive', sql`${table.version} >= 1`),
  ],
);

/** The contacts of a deal, one row per pair: a contact that a deal lists cannot be deleted. */
export const dealContacts = sqliteTable(
  'deal_contacts',
  {
    workspaceId: text('workspace_id').notNull(),
    dealId: text('deal_id').notNull(),
    contactId: text('contact_id').notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.dealId, table.contactId] }),
    foreignKey({ columns: [table.workspaceId, table.dealId], foreignColumns: [deals.workspaceId, deals.id] }).onDelete('cascade'),
    foreignKey({ columns: [table.workspaceId, table.contactId], foreignColumns: [contacts.workspaceId, contacts.id] }),
    index('deal_contacts_contact_id_idx').on(table.workspaceId, table.contactId),
  ],
);

// Contracts: linked to a company, a deal or both of the row's own workspace (composite foreign
// keys; a company or deal that a contract names cannot be deleted). `expires_at` is the instant a
// sent contract expires, 00:00 UTC of the day after `expires_on`, kept beside the day so that reads
// and the expiry sweep compare integers.

/** The statuses of a contract (the contract's `ContractStatus`). */
export const contractStatuses = enumValues.ContractStatus;
export type ContractStatus = (typeof contractStatuses)[number];

export const contractStorageLimits = {
  title: maxLengths.Contract.title,
  body: maxLengths.Contract.body,
} as const;

export const contracts = sqliteTable(
  'contracts',
  {
    id: text('id').primaryKey(), // ctr_…
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    title: text('title').notNull(),
    status: text('status', { enum: contractStatuses }).notNull(),
    companyId: text('company_id'),
    dealId: text('deal_id'),
    amountMinor: integer('amount_minor'),
    currency: text('currency'),
    body: text('body'),
    /** YYYY-MM-DD: the last day a sent contract can be signed. */
    expiresOn: text('expires_on').notNull(),
    expiresAt: integer('expires_at').notNull(),
    sentAt: integer('sent_at'),
    signedAt: integer('signed_at'),
    declinedAt: integer('declined_at'),
    expiredAt: integer('expired_at'),
    version: integer('version').notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [
    uniqueIndex('contracts_workspace_id_id_unique').on(table.workspaceId, table.id),
    foreignKey({ columns: [table.workspaceId, table.companyId], foreignColumns: [companies.workspaceId, companies.id] }),
    foreignKey({ columns: [table.workspaceId, table.dealId], foreignColumns: [deals.workspaceId, deals.id] }),
    index('contracts_created_at_idx').on(table.workspaceId, table.createdAt, table.id),
    index('contracts_title_idx').on(table.workspaceId, table.title, table.id),
    index('contracts_expires_on_idx').on(table.workspaceId, table.expiresOn, table.id),
    index('contracts_status_idx').on(table.workspaceId, table.status, table.createdAt, table.id),
    index('contracts_company_id_idx').on(table.workspaceId, table.companyId, table.createdAt, table.id),
    index('contracts_deal_id_idx').on(table.workspaceId, table.dealId, table.createdAt, table.id),
    // The expiry sweep: sent contracts by the instant they expire.
    index('contracts_sent_expires_at_idx').on(table.status, table.expiresAt),
    check('contracts_title_length', sql.raw(`length("title") BETWEEN 1 AND ${contractStorageLimits.title}`)),
    check('contracts_body_length', nullableTextWithin('body', contractStorageLimits.body)),
    check('contracts_status_known', inList('status', contractStatuses)),
    check('contracts_names_company_or_deal', sql`${table.companyId} IS NOT NULL OR ${table.dealId} IS NOT NULL`),
    check('contracts_value_complete', sql`(${table.amountMinor} IS NULL) = (${table.currency} IS NULL)`),
    check('contracts_amount_minor_not_negative', sql`${table.amountMinor} IS NULL OR ${table.amountMinor} >= 0`),
    check('contracts_currency_code', sql.raw(`"currency" IS NULL OR (length("currency") = 3 AND upper("currency") = "currency")`)),
    check('contracts_version_positive', sql`${table.version} >= 1`),
  ],
);

// Connectors: a workspace's connections to outside services (one row per connector, several of a
// kind allowed), and the GitHub issues imported as tasks. The credential is stored only sealed
// (AES-256-GCM with the webhook secrets' key, see src/webhooks/secretBox.ts) and only while
// it may still be used: `not_connected` and `disconnected` rows hold none.

/** The kinds of the connector catalogue (the contract's `ConnectorKindId`). */
export const connectorKinds = enumValues.ConnectorKindId;
export type ConnectorKind = (typeof connectorKinds)[number];
/** The stored statuses (the contract's `ConnectorStatus`); `expired` is also shown for a `connected` row whose expiry has passed. */
export const connectorStatuses = enumValues.ConnectorStatus;
export type ConnectorStatus = (typeof connectorStatuses)[number];

export const connectors = sqliteTable(
  'connectors',
  {
    id: text('id').primaryKey(), // con_…
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: connectorKinds }).notNull(),
    name: text('name').notNull(),
    status: text('status', { enum: connectorStatuses }).notNull(),
    /** The credential sealed with the connector id as context; never the credential itself. */
    sealedCredential: text('sealed_credential'),
    /** The credential's last 4 characters, shown to tell credentials apart. */
    credentialHint: text('credential_hint'),
    credentialExpiresAt: integer('credential_expires_at'),
    /** The account the credential acts as (GitHub: the login of GET /user). */
    accountLogin: text('account_login'),
    connectedAt: integer('connected_at'),
    disconnectedAt: integer('disconnected_at'),
    expiredAt: integer('expired_at'),
    version: integer('version').notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    /** The user who created it (`usr_…`); kept when that user is removed, which the API shows as creatorRemoved. Null when unknown. */
    createdBy: text('created_by'),
    /** When the creator was removed from the workspace (ms); null while it is a member, or when the creator is unknown. */
    creatorRemovedAt: integer('creator_removed_at'),
  },
  (table) => [
    uniqueIndex('connectors_workspace_id_id_unique').on(table.workspaceId, table.id),
    index('connectors_created_at_idx').on(table.workspaceId, table.createdAt, table.id),
    index('connectors_updated_at_idx').on(table.workspaceId, table.updatedAt, table.id),
    index('connectors_name_idx').on(table.workspaceId, table.name, table.id),
    index('connectors_kind_idx').on(table.workspaceId, table.kind, table.createdAt, table.id),
    check('connectors_kind_known', inList('kind', connectorKinds)),
    check('connectors_status_known', inList('status', connectorStatuses)),
    check('connectors_name_length', sql.raw(`length("name") BETWEEN 1 AND ${maxLengths.Connector.name}`)),
    check(
      'connectors_credential_while_usable',
      sql.raw(`("status" = 'connected' AND "sealed_credential" IS NOT NULL) OR ("status" IN ('not_connected', 'disconnected') AND "sealed_credential" IS NULL) OR "status" = 'expired'`),
    ),
    check('connectors_version_positive', sql`${table.version} >= 1`),
  ],
);

/**
 * One row per GitHub issue imported into a workspace (keyed by GitHub's issue id, which survives a
 * repository rename), naming its task, and the issue's title and state as last imported: a
 * re-import changes the task only where the issue changed on GitHub since.
 */
export const importedIssues = sqliteTable(
  'imported_issues',
  {
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    issueId: integer('issue_id').notNull(),
    /** `owner/name` as GitHub spelled it at the last import. */
    repository: text('repository').notNull(),
    issueNumber: integer('issue_number').notNull(),
    /** The task made from it; it may have been deleted since (then it is not made again). */
    taskId: text('task_id').notNull(),
    issueTitle: text('issue_title').notNull(),
    issueState: text('issue_state', { enum: ['open', 'closed'] }).notNull(),
    importedAt: integer('imported_at').notNull(),
  },
  (table) => [primaryKey({ columns: [table.workspaceId, table.issueId] }), check('imported_issues_state_known', inList('issue_state', ['open', 'closed']))],
);

/**
 * The outbox: one row per change, written in the same transaction as the change. `payload` is
 * the whole webhook envelope as JSON; the webhook worker delivers it later.
 */
export const events = sqliteTable(
  'events',
  {
    id: text('id').primaryKey(), // evt_…
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    type: text('type').notNull(),
    occurredAt: integer('occurred_at').notNull(),
    payload: text('payload').notNull(),
  },
  (table) => [index('events_occurred_at_idx').on(table.occurredAt), index('events_workspace_id_idx').on(table.workspaceId, table.occurredAt)],
);

/** Stored 2xx answers of POST requests sent with an Idempotency-Key, kept until `expires_at`. */
export const idempotencyKeys = sqliteTable(
  'idempotency_keys',
  {
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    key: text('key').notNull(),
    method: text('method').notNull(),
    path: text('path').notNull(),
    status: integer('status').notNull(),
    /** JSON object of the response headers to replay. */
    headers: text('headers').notNull(),
    body: text('body').notNull(),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
  },
  (table) => [primaryKey({ columns: [table.workspaceId, table.key] }), index('idempotency_keys_expires_at_idx').on(table.expiresAt)],
);

/** Personal-access-token calls per workspace and UTC calendar month. */
export const quotaCounters = sqliteTable(
  'quota_counters',
  {
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    /** `YYYY-MM`, UTC. */
    period: text('period').notNull(),
    count: integer('count').notNull(),
  },
  (table) => [primaryKey({ columns: [table.workspaceId, table.period] })],
);

export const webhookSubscriptionStatuses = enumValues['WebhookFields.status'];
export type WebhookSubscriptionStatus = (typeof webhookSubscriptionStatuses)[number];
export const webhookDisabledCodes = enumValues['WebhookDisabledReason.code'];
export type WebhookDisabledCode = (typeof webhookDisabledCodes)[number];
export const webhookDeliveryStatuses = enumValues.WebhookDeliveryStatus;
export type WebhookDeliveryStatus = (typeof webhookDeliveryStatuses)[number];

/**
 * Webhook subscriptions. Signing secrets are stored only sealed (AES-256-GCM, see
 * src/webhooks/secretBox.ts): the current one, and during a rotation's overlap the previous one
 * until `previous_secret_expires_at`.
 */
export const webhookSubscriptions = sqliteTable(
  'webhook_subscriptions',
  {
    id: text('id').primaryKey(), // whk_…
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    description: text('description'),
    /** JSON array of event types. */
    eventTypes: text('event_types').notNull(),
    status: text('status', { enum: webhookSubscriptionStatuses }).notNull(),
    disabledCode: text('disabled_code', { enum: webhookDisabledCodes }),
    disabledMessage: text('disabled_message'),
    disabledAt: integer('disabled_at'),
    consecutiveFailedEvents: integer('consecutive_failed_events').notNull().default(0),
    signingKeyVersion: integer('signing_key_version').notNull(),
    sealedSecret: text('sealed_secret').notNull(),
    sealedPreviousSecret: text('sealed_previous_secret'),
    previousSecretExpiresAt: integer('previous_secret_expires_at'),
    version: integer('version').notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    /** The user who created it (`usr_…`); kept when that user is removed, which the API shows as creatorRemoved. Null when unknown. */
    createdBy: text('created_by'),
    /** When the creator was removed from the workspace (ms); null while it is a member, or when the creator is unknown. */
    creatorRemovedAt: integer('creator_removed_at'),
  },
  (table) => [
    index('webhook_subscriptions_created_at_idx').on(table.workspaceId, table.createdAt, table.id),
    check('webhook_subscriptions_status_known', inList('status', webhookSubscriptionStatuses)),
    check(
      'webhook_subscriptions_disabled_reason',
      sql`(${table.status} = 'ACTIVE' AND ${table.disabledCode} IS NULL) OR (${table.status} = 'DISABLED' AND ${table.disabledCode} IS NOT NULL)`,
    ),
    check(
      'webhook_subscriptions_previous_secret',
      sql`(${table.sealedPreviousSecret} IS NULL) = (${table.previousSecretExpiresAt} IS NULL)`,
    ),
  ],
);

/**
 * One delivery of one event to one subscription (a replay is another delivery of the same
 * event). A worker claims a due PENDING row by setting `lease_owner` (`<worker id>.<random>`, a
 * fresh token per claim) and `lease_expires_at`; a claim whose lease has expired is free again,
 * so a dead worker's attempt is made by another, and only the current claim's token records.
 */
export const webhookDeliveries = sqliteTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(), // dlv_…
    subscriptionId: text('subscription_id')
      .notNull()
      .references(() => webhookSubscriptions.id, { onDelete: 'cascade' }),
    workspaceId: text('workspace_id').notNull(),
    eventId: text('event_id')
      .notNull()
      .references(() => events.id, { onDelete: 'cascade' }),
    eventType: text('event_type').notNull(),
    replay: integer('replay', { mode: 'boolean' }).notNull(),
    status: text('status', { enum: webhookDeliveryStatuses }).notNull(),
    attemptCount: integer('attempt_count').notNull().default(0),
    /** Null once the delivery has ended. */
    nextAttemptAt: integer('next_attempt_at'),
    leaseOwner: text('lease_owner'),
    leaseExpiresAt: integer('lease_expires_at'),
    createdAt: integer('created_at').notNull(),
    completedAt: integer('completed_at'),
  },
  (table) => [
    index('webhook_deliveries_due_idx')
      .on(table.nextAttemptAt)
      .where(sql`${table.status} = 'PENDING'`),
    index('webhook_deliveries_subscription_idx').on(table.subscriptionId, table.createdAt, table.id),
    index('webhook_deliveries_event_idx').on(table.eventId),
    index('webhook_deliveries_completed_at_idx').on(table.completedAt),
    check('webhook_deliveries_status_known', inList('status', webhookDeliveryStatuses)),
    check(
      'webhook_deliveries_pending_has_next',
      sql`(${table.status} = 'PENDING') = (${table.nextAttemptAt} IS NOT NULL)`,
    ),
  ],
);

/** Every attempt of a delivery: when, how long, the status or why there was none. */
export const webhookAttempts = sqliteTable(
  'webhook_attempts',
  {
    deliveryId: text('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    number: integer('number').notNull(),
    attemptedAt: integer('attempted_at').notNull(),
    durationMs: integer('duration_ms').notNull(),
    statusCode: integer('status_code'),
    errorCode: text('error_code'),
    errorMessage: text('error_message'),
    succeeded: integer('succeeded', { mode: 'boolean' }).notNull(),
    nextAttemptAt: integer('next_attempt_at'),
  },
  (table) => [primaryKey({ columns: [table.deliveryId, table.number] })],
);

/**
 * Counters per workspace and listed collection (`tasks`, `projects`) that triggers on those
 * tables raise in the same transaction as every insert, update and delete, whichever process or
 * code path writes. A collection's revision is the sum of its slots' counters; readers serve an
 * encoded list page again only while it is unchanged. No row means no write yet (revision 0).
 * SQLite has one writer and raises slot 0. PostgreSQL raises the slot of the writing connection
 * (a number from a sequence, taken at its first write, modulo 64), so that concurrent writers to one workspace update different rows
 * instead of each one's SERIALIZABLE transaction failing on the other's update of the same row.
 */
export const collectionRevisions = sqliteTable(
  'collection_revisions',
  {
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    collection: text('collection').notNull(),
    slot: integer('slot').notNull().default(0),
    revision: integer('revision').notNull(),
  },
  (table) => [primaryKey({ columns: [table.workspaceId, table.collection, table.slot] })],
);

export const aiSpendStates = ['reserved', 'settled', 'released'] as const;
export type AiSpendState = (typeof aiSpendStates)[number];

/**
 * The AI spend ledger, in integer millicents (1/1000 of a US cent). Before a provider call an
 * entry is `reserved` at the call's upper-bound cost; after it, `settled` at the actual cost (from
 * the provider's reported usage and the price table), or `released` when the call failed (a failed
 * call costs nothing). What counts against a workspace's daily cap: settled entries at their
 * actual cost plus reserved ones at their estimate (a reservation whose process died counts until
 * its day ends).
 */
export const aiSpendEntries = sqliteTable(
  'ai_spend_entries',
  {
    id: text('id').primaryKey(), // ais_…
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    /** `YYYY-MM-DD`, the UTC day the entry counts against. */
    day: text('day').notNull(),
    /** The operation that made the call, e.g. `draftTasks`. */
    operation: text('operation').notNull(),
    model: text('model').notNull(),
    /** The request id of the call, to find its log lines. */
    requestId: text('request_id').notNull(),
    state: text('state', { enum: aiSpendStates }).notNull(),
    reservedMillicents: integer('reserved_millicents').notNull(),
    /** Set when settled. */
    actualMillicents: integer('actual_millicents'),
    promptTokens: integer('prompt_tokens'),
    completionTokens: integer('completion_tokens'),
    createdAt: integer('created_at').notNull(),
    /** When the entry was settled or released. */
    closedAt: integer('closed_at'),
  },
  (table) => [
    index('ai_spend_entries_workspace_day_idx').on(table.workspaceId, table.day),
    check('ai_spend_entries_state_known', inList('state', aiSpendStates)),
    check('ai_spend_entries_reserved_not_negative', sql`${table.reservedMillicents} >= 0`),
    check('ai_spend_entries_settled_has_actual', sql`(${table.state} = 'settled') = (${table.actualMillicents} IS NOT NULL)`),
  ],
);

/**
 * Idempotency keys whose first request is still running outside a transaction (an operation that
 * waits for a provider before it can answer). A second request with the key meanwhile is refused
 * rather than acting twice; the claim is dropped when the first request answers, and a claim
 * left by a process that died stops counting at `claimedUntil`.
 */
export const idempotencyClaims = sqliteTable(
  'idempotency_claims',
  {
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    key: text('key').notNull(),
    claimedUntil: integer('claimed_until').notNull(),
  },
  (table) => [primaryKey({ columns: [table.workspaceId, table.key] })],
);

// ─── OAuth 2.0 authorization server (/oauth) ────────────────────────────────────────────────────

/**
 * Clients registered by the admin CLI (`oauth-client create`). A client belongs to one workspace:
 * only that workspace's users can authorize it, and its tokens act inside that workspace.
 */
export const oauthClients = sqliteTable(
  'oauth_clients',
  {
    id: text('id').primaryKey(), // ocl_…
    workspaceId: text('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** JSON array of the redirect URIs an authorization request must match exactly. */
    redirectUris: text('redirect_uris').notNull(),
    /** JSON array of the scopes the client may ask for; a user grants these or fewer. */
    scopes: text('scopes').notNull(),
    /** Lowercase hex SHA-256 of a confidential client's secret (the secret is never stored); null for a public client. */
    secretHash: text('secret_hash'),
    createdAt: integer('created_at').notNull(),
  },
  (table) => [
    index('oauth_clients_workspace_id_idx').on(table.workspaceId, table.createdAt),
    check('oauth_clients_name_length', sql`length(${table.name}) BETWEEN 1 AND 120`),
  ],
);

/**
 * What the authorization server (oidc-provider) keeps: access and refresh tokens, authorization
 * codes, grants, its sessions and interactions, one row each. The id of a token, code or session
 * is the bearer secret itself, so only its SHA-256 is stored (`id_hash`) and the payload never
 * carries it. The columns beside the payload exist to find and delete rows: all of a grant (a
 * reused code or refresh token revokes the family), of a client (deleted), of a user (removed).
 */
export const oauthRecords = sqliteTable(
  'oauth_records',
  {
    /** oidc-provider's model name: AccessToken, RefreshToken, AuthorizationCode, Grant, Session, Interaction, … */
    model: text('model').notNull(),
    /** Lowercase hex SHA-256 of the record's id. */
    idHash: text('id_hash').notNull(),
    /** The model's JSON payload, without its id. */
    payload: text('payload').notNull(),
    grantId: text('grant_id'),
    clientId: text('client_id'),
    /** The user the record acts for (usr_…). */
    accountId: text('account_id'),
    /** A session's uid (not a secret: interactions name it). */
    uid: text('uid'),
    /** Milliseconds since the epoch; null for records that never expire. */
    expiresAt: integer('expires_at'),
    /** When a single-use record (an authorization code, a rotated refresh token) was used. */
    consumedAt: integer('consumed_at'),
  },
  (table) => [
    primaryKey({ columns: [table.model, table.idHash] }),
    index('oauth_records_grant_id_idx').on(table.grantId),
    index('oauth_records_client_id_idx').on(table.clientId),
    index('oauth_records_account_id_idx').on(table.accountId),
    index('oauth_records_uid_idx').on(table.uid),
    index('oauth_records_expires_at_idx').on(table.expiresAt),
  ],
);
