// Drizzle schema of the server's SQLite database. `npm run db:generate` turns changes into SQL
// migrations under db/migrations/, which openDatabase() applies at start-up.
// Every timestamp is an integer number of milliseconds since the Unix epoch.
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
