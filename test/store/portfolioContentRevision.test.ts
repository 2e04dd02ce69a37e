// The portfolio revision and the answers the reader keeps per revision: a write through any
// connection (the admin CLI is another process on the same file) is served on the next read.
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { importPortfolio } from '../../src/portfolio/import/importPortfolio.js';
import { migrationsFolder, openDatabase } from '../../src/store/database.js';
import { createBoundedCache } from '../../src/store/boundedCache.js';
import { createPortfolioReader } from '../../src/store/portfolioContent.js';
import { makeClock, makeDatabase, makeDocument, makeTempDir, makeTenant, type TempDatabase } from './factories.js';

let t: TempDatabase;
let writer: BetterSqlite3.Database;
let tenantId: string;
// One millisecond for every write: revisions, not timestamps, must tell the writes apart.
const clock = makeClock(Date.UTC(2025, 5, 1, 8, 30, 0));

const revisionOf = (db: BetterSqlite3.Database, id: string) =>
  db.prepare('SELECT revision FROM portfolios WHERE tenant_id = ?').pluck().get(id) as number | undefined;
const readerOf = (db: BetterSqlite3.Database, maxBytes = 4 * 1024 * 1024) => createPortfolioReader(db, { cache: createBoundedCache({ maxBytes }) });
const text = (bytes: Buffer | undefined) => (bytes === undefined ? undefined : JSON.parse(bytes.toString('utf8')));
const withName = (name: string, overrides: Record<string, unknown> = {}) =>
  makeDocument({ profile: { name, headline: 'Designer', bioSummary: 'Designs things.', location: null, avatar: null }, ...overrides });

beforeEach(async () => {
  t = makeDatabase();
  tenantId = await makeTenant(t.db);
  await importPortfolio(t.db, tenantId, withName('First'), clock.now);
  // A second connection on the same file stands for another process.
  writer = openDatabase(t.path);
});
afterEach(() => {
  writer.close();
  t.cleanup();
});

describe('portfolio revision', () => {
  it('starts a new portfolio at the injected random value and raises it on every import, within one millisecond', async () => {
    const other = await makeTenant(t.db, 'Other');
    const sixBytes = Uint8Array.from([0, 0, 0, 1, 0, 2]);
    await importPortfolio(t.db, other, makeDocument(), clock.now, { randomBytes: (size) => (size === 6 ? sixBytes : new Uint8Array(size).fill(7)) });
    // The importer starts at the random value; the item and asset triggers (migration 0005) add theirs.
    const first = revisionOf(t.db, other)!;
    expect(first).toBeGreaterThanOrEqual(0x01_00_02);
    expect(first).toBeLessThan(0x01_00_02 + 1000);
    await importPortfolio(t.db, other, makeDocument(), clock.now);
    const second = revisionOf(t.db, other)!;
    expect(second).toBeGreaterThan(first);
    await importPortfolio(writer, other, makeDocument({ published: false }), clock.now);
    expect(revisionOf(t.db, other)!).toBeGreaterThan(second);
  });

  it('leaves the revision alone when an import is refused', async () => {
    const before = revisionOf(t.db, tenantId);
    await expect(importPortfolio(t.db, tenantId, { formatVersion: 2 }, clock.now)).rejects.toThrow();
    expect(revisionOf(t.db, tenantId)).toBe(before);
  });
});

describe('answers kept per revision', () => {
  it('hands out the same encoded document while nothing is written, and the new one after a write by another connection', async () => {
    const reader = readerOf(t.db);
    const first = await reader.publishedDocumentBytes(tenantId);
    expect(text(first).profile.name).toBe('First');
    expect(await reader.publishedDocumentBytes(tenantId)).toBe(first);

    await importPortfolio(writer, tenantId, withName('Second'), clock.now);
    const second = await reader.publishedDocumentBytes(tenantId);
    expect(second).not.toBe(first);
    expect(text(second).profile.name).toBe('Second');
    expect(second?.toString('utf8')).toBe(t.db.prepare('SELECT document_json FROM portfolios WHERE tenant_id = ?').pluck().get(tenantId));
  });

  it('answers undefined on the next read after another connection unpublishes, and serves the portfolio again when republished', async () => {
    const reader = readerOf(t.db);
    expect(await reader.publishedDocumentBytes(tenantId)).toBeDefined();
    expect(await reader.publishedBySlugBytes(tenantId, 'post', 'post-one')).toBeDefined();
    await importPortfolio(writer, tenantId, withName('Hidden', { published: false }), clock.now);
    expect(await reader.publishedDocumentBytes(tenantId)).toBeUndefined();
    expect(await reader.publishedBySlugBytes(tenantId, 'post', 'post-one')).toBeUndefined();
    expect(await reader.encodedListPage(tenantId, 'post', { limit: 20, offset: 0 }, () => Buffer.from('{}'))).toBeUndefined();
    await importPortfolio(writer, tenantId, withName('Back'), clock.now);
    expect(text(await reader.publishedDocumentBytes(tenantId)).profile.name).toBe('Back');
  });

  it('keeps a list page per revision and page, encoding it again only after a write', async () => {
    const reader = readerOf(t.db);
    const encoded: { total: number; slugs: string[] }[] = [];
    const page = (limit: number) =>
      reader.encodedListPage(tenantId, 'post', { limit, offset: 0 }, ({ items, total }) => {
        encoded.push({ total, slugs: items.map((post) => post.slug) });
        return Buffer.from(JSON.stringify({ items, total }));
      });
    const first = await page(20);
    expect(await page(20)).toBe(first);
    expect(encoded).toEqual([{ total: 2, slugs: ['post-one', 'post-two'] }]);
    await page(1);
    expect(encoded).toHaveLength(2);

    await importPortfolio(
      writer,
      tenantId,
      makeDocument({ posts: [{ slug: 'post-three', published: true, title: 'Three', excerpt: '', bodyHtml: '', publishedAt: '2025-02-01T00:00:00Z' }] }),
      clock.now,
    );
    expect(text(await page(20))).toMatchObject({ total: 1, items: [{ slug: 'post-three' }] });
    expect(encoded.at(-1)).toEqual({ total: 1, slugs: ['post-three'] });
  });

  it('keeps an item by slug until another connection changes or unpublishes it', async () => {
    const reader = readerOf(t.db);
    const first = await reader.publishedBySlugBytes(tenantId, 'page', 'about');
    expect(text(first)).toMatchObject({ slug: 'about', title: 'About' });
    expect(await reader.publishedBySlugBytes(tenantId, 'page', 'about')).toBe(first);
    expect(await reader.publishedBySlugBytes(tenantId, 'post', 'about')).toBeUndefined();

    const pages = (makeDocument().pages as Record<string, unknown>[]).map((about) => ({ ...about, title: 'About, again' }));
    await importPortfolio(writer, tenantId, makeDocument({ pages }), clock.now);
    expect(text(await reader.publishedBySlugBytes(tenantId, 'page', 'about')).title).toBe('About, again');

    await importPortfolio(writer, tenantId, makeDocument({ pages: pages.map((about) => ({ ...about, published: false })) }), clock.now);
    expect(await reader.publishedBySlugBytes(tenantId, 'page', 'about')).toBeUndefined();
  });

  it('does not keep an answer larger than the whole cache', async () => {
    const reader = readerOf(t.db, 64 * 1024);
    let encodings = 0;
    const huge = () =>
      reader.encodedListPage(tenantId, 'post', { limit: 20, offset: 0 }, () => {
        encodings += 1;
        return Buffer.alloc(64 * 1024 + 1);
      });
    await huge();
    await huge();
    expect(encodings).toBe(2);
  });
});

describe('migration 0003 (portfolio revision)', () => {
  it('adds the revision to portfolios of a database created at migration 0002, and imports then count from there', async () => {
    const dir = makeTempDir();
    // The committed migrations up to 0002 only, as an older release would have applied them.
    const olderFolder = path.join(dir, 'migrations');
    mkdirSync(path.join(olderFolder, 'meta'), { recursive: true });
    const journal = JSON.parse(readFileSync(path.join(migrationsFolder, 'meta/_journal.json'), 'utf8')) as { entries: { tag: string }[] };
    const older = journal.entries.slice(0, 3);
    expect(older.at(-1)?.tag).toBe('0002_webhooks');
    for (const entry of older) copyFileSync(path.join(migrationsFolder, `${entry.tag}.sql`), path.join(olderFolder, `${entry.tag}.sql`));
    writeFileSync(path.join(olderFolder, 'meta/_journal.json'), JSON.stringify({ ...journal, entries: older }));

    const file = path.join(dir, 'old.db');
    const old = new BetterSqlite3(file);
    migrate(drizzle(old), { migrationsFolder: olderFolder });
    old.prepare("INSERT INTO tenants (id, name, created_at) VALUES ('ten_old', 'Old', 1)").run();
    const documentJson = JSON.stringify({ profile: { name: 'Old' } });
    old.prepare("INSERT INTO portfolios VALUES ('ten_old', 1, '{}', '{}', ?, 1)").run(documentJson);
    old.close();

    const db = openDatabase(file);
    try {
      const column = (db.prepare('PRAGMA table_info(portfolios)').all() as { name: string; notnull: number; dflt_value: string }[]).find(
        (candidate) => candidate.name === 'revision',
      );
      expect(column).toMatchObject({ notnull: 1, dflt_value: '0' });
      expect(revisionOf(db, 'ten_old')).toBe(0);
      const reader = readerOf(db);
      expect((await reader.publishedDocumentBytes('ten_old'))?.toString('utf8')).toBe(documentJson);
      await importPortfolio(db, 'ten_old', withName('Imported'), clock.now);
      expect(revisionOf(db, 'ten_old')).toBeGreaterThan(0);
      expect(text(await reader.publishedDocumentBytes('ten_old')).profile.name).toBe('Imported');
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
