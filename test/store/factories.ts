// Small factories shared by the store, import, sanitizer and CLI tests: real SQLite files in
// temporary directories, a controllable clock and minimal valid import documents.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { afterEach } from 'vitest';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { encodeListPage } from '../../src/portfolio/listPublished.js';
import { createBoundedCache } from '../../src/store/boundedCache.js';
import { openDatabase } from '../../src/store/database.js';
import type { StoreSource } from '../../src/store/engine.js';
import { createPortfolioReader, type PageRequest } from '../../src/store/portfolioContent.js';
import type { ListedItemByKind, PortfolioItemKind, PortfolioResponse, SlugItemByKind, SlugKind } from '../../src/store/portfolioShapes.js';
import { createTenantStore } from '../../src/store/tenants.js';

export const repoRoot = path.resolve(import.meta.dirname, '../..');

export interface TempDatabase {
  db: BetterSqlite3.Database;
  dir: string;
  path: string;
  cleanup(): void;
}

export function makeTempDir(): string {
  return mkdtempSync(path.join(tmpdir(), 'portfolio-store-test-'));
}

/** Makes temporary directories on demand, each removed after the test that asked for it (call at a file's top level). */
export function tempDirsRemovedAfterEach(): () => string {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = makeTempDir();
    dirs.push(dir);
    return dir;
  };
}

/** A fresh, migrated database file in its own temporary directory. */
export function makeDatabase(): TempDatabase {
  const dir = makeTempDir();
  const file = path.join(dir, 'nested', 'app.db');
  const db = openDatabase(file);
  return {
    db,
    dir,
    path: file,
    cleanup() {
      if (db.open) db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Every SQL text the database prepares until `stop()`, in order: what a store really runs, for
 * EXPLAIN QUERY PLAN checks.
 */
export function recordPreparedStatements(db: BetterSqlite3.Database): { statements: string[]; stop(): void } {
  const statements: string[] = [];
  const prepare = db.prepare;
  db.prepare = ((source: string) => {
    statements.push(source);
    return prepare.call(db, source);
  }) as typeof db.prepare;
  return { statements, stop: () => void (db.prepare = prepare) };
}

/** SQLite's plan for a statement (each `?` bound to 1), its steps joined by ` | `. */
export function queryPlanOf(db: BetterSqlite3.Database, source: string): string {
  const parameters = Array.from({ length: (source.match(/\?/g) ?? []).length }, () => 1);
  return (db.prepare(`EXPLAIN QUERY PLAN ${source}`).all(...parameters) as { detail: string }[]).map((row) => row.detail).join(' | ');
}

/** A clock that only moves when told to. */
export function makeClock(start = Date.UTC(2025, 0, 15, 12, 0, 0)) {
  let current = start;
  const now = () => current;
  return {
    now,
    set(ms: number) {
      current = ms;
    },
    advance(ms: number) {
      current += ms;
    },
  };
}

export async function makeTenant(source: StoreSource, name = 'Test tenant', now?: () => number): Promise<string> {
  return (await createTenantStore(source, now ? { now } : {}).createTenant(name)).id;
}

/** A small valid import document with one item of every kind; `overrides` replace top-level members. */
export function makeDocument(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    formatVersion: 1,
    published: true,
    profile: { name: 'Sam Doe', headline: 'Designer', bioSummary: 'Designs things.', location: null, avatar: 'ast_avatar' },
    assets: [
      { id: 'ast_avatar', url: 'https://media.example.com/sam.webp', altText: 'Sam', mimeType: 'image/webp', width: 400, height: 400 },
      { id: 'ast_cover', url: 'https://media.example.com/cover.png', altText: '', mimeType: 'image/png' },
    ],
    outcomes: [
      {
        slug: 'first-outcome',
        published: true,
        title: 'First outcome',
        summary: 'It went well.',
        bodyHtml: '<p>Body</p>',
        coverImage: 'ast_cover',
        metrics: [{ label: 'Conversion', value: '+5%' }],
      },
      { slug: 'hidden-outcome', published: false, title: 'Hidden', summary: '', bodyHtml: '' },
    ],
    posts: [
      { slug: 'post-one', published: true, title: 'Post one', excerpt: 'One', bodyHtml: '<p>One</p>', publishedAt: '2025-01-01T10:00:00Z', tags: ['a'] },
      { slug: 'post-draft', published: false, title: 'Draft', excerpt: '', bodyHtml: '', publishedAt: '2025-01-02T10:00:00Z' },
      { slug: 'post-two', published: true, title: 'Post two', excerpt: 'Two', bodyHtml: '<p>Two</p>', publishedAt: '2025-01-03T10:00:00Z', updatedAt: '2025-01-04T10:00:00+01:00' },
    ],
    pages: [
      {
        slug: 'about',
        published: true,
        title: 'About',
        description: 'About Sam',
        blocks: [
          { type: 'heading', level: 2, text: 'Hello' },
          { type: 'richText', html: '<p>Rich</p>' },
          { type: 'image', image: 'ast_cover', caption: 'Cover' },
          { type: 'gallery', images: ['ast_cover', 'ast_avatar'] },
          { type: 'quote', text: 'Quote', attribution: null },
          { type: 'callToAction', label: 'Mail', url: 'mailto:sam@example.com' },
        ],
      },
    ],
    experience: [{ id: 'exp_one', published: true, organization: 'Org', role: 'Role', startDate: '2020-01-01', summary: 'Did work.' }],
    skills: [{ published: true, name: 'Figma', level: 'expert' }],
    stats: [{ published: true, label: 'Years', value: 7, unit: 'years' }],
    awards: [{ published: true, title: 'Award', issuer: 'Issuer', awardedOn: '2023-05-01', url: 'https://awards.example.org/1' }],
    education: [{ published: true, kind: 'certification', title: 'Cert', institution: 'Inst' }],
    testimonials: [{ published: true, quote: 'Great', authorName: 'Pat', avatar: 'ast_avatar' }],
    links: [
      { id: 'lnk_site', published: true, kind: 'website', label: 'Site', url: 'https://sam.example.com' },
      { id: 'lnk_mail', published: false, kind: 'email', label: 'Mail', url: 'mailto:sam@example.com' },
    ],
    ...overrides,
  };
}

const decode = (bytes: Buffer | undefined): unknown => (bytes === undefined ? undefined : JSON.parse(bytes.toString('utf8')));

/**
 * The published portfolio as its operations read it: the reader functions the handlers call (and
 * the list operations' own encoding), their answers decoded.
 */
export function publishedReads(source: StoreSource) {
  const reader = createPortfolioReader(source, { cache: createBoundedCache({ maxBytes: 4 * 1024 * 1024 }) });
  return {
    reader,
    document: async (tenantId: string) => decode(await reader.publishedDocumentBytes(tenantId)) as PortfolioResponse | undefined,
    profile: (tenantId: string) => reader.profile(tenantId),
    list: async <K extends PortfolioItemKind>(tenantId: string, kind: K, page: PageRequest) =>
      decode(await reader.encodedListPage(tenantId, kind, page, encodeListPage<K>(page))) as
        | { items: ListedItemByKind[K][]; paging: { limit: number; offset: number; total: number; hasMore: boolean; nextOffset: number | null } }
        | undefined,
    bySlug: async <K extends SlugKind>(tenantId: string, kind: K, slug: string) =>
      decode(await reader.publishedBySlugBytes(tenantId, kind, slug)) as SlugItemByKind[K] | undefined,
  };
}

/** Row counts of every portfolio table for one tenant, to prove that nothing was written. */
export function contentCounts(db: BetterSqlite3.Database, tenantId: string) {
  const count = (table: string) =>
    db.prepare(`SELECT count(*) FROM ${table} WHERE tenant_id = ?`).pluck().get(tenantId) as number;
  return { portfolios: count('portfolios'), assets: count('assets'), items: count('portfolio_items') };
}


let contractAjv: InstanceType<typeof Ajv2020Module.default> | undefined;

/** Validates `value` against a schema of the bundled contract (generated/portfolio/openapi.json). */
export function contractErrors(schemaName: string, value: unknown): string[] {
  if (!contractAjv) {
    contractAjv = new Ajv2020Module.default({ strict: false, allErrors: true });
    addFormatsModule.default(contractAjv);
    const document = JSON.parse(readFileSync(path.join(repoRoot, 'generated/portfolio/openapi.json'), 'utf8')) as object;
    contractAjv.addSchema(document, 'portfolio-openapi');
  }
  const validate = contractAjv.getSchema(`portfolio-openapi#/components/schemas/${schemaName}`);
  if (!validate) throw new Error(`No schema ${schemaName} in the contract`);
  return validate(value) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message ?? ''}`);
}
