// The Published Portfolio Read API's stores on both engines: tenants, API keys, the import that
// replaces a portfolio, the reader the handlers serve from and the export, through the same code
// (src/store/engine.ts).
import { count, eq, sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { apiKeys, assets, portfolioItems, portfolios } from '../../db/schema.js';
import { mintApiKey } from '../../src/auth/apiKeyFormat.js';
import { exportPortfolio, importPortfolio } from '../../src/portfolio/import/importPortfolio.js';
import { createApiKeyStore } from '../../src/store/apiKeys.js';
import type { StoreEngine } from '../../src/store/engine.js';
import { StoreError } from '../../src/store/errors.js';
import { normalizePortfolioDocument } from '../../src/portfolio/import/normalizeImport.js';
import { renderPortfolio } from '../../src/portfolio/import/renderPortfolio.js';
import type { PortfolioDocumentInput } from '../../src/portfolio/import/importFormat.js';
import { createPortfolioDocumentStore } from '../../src/store/portfolioDocuments.js';
import { createTenantStore } from '../../src/store/tenants.js';
import { storeEngines, type OpenedEngine } from '../support/engines.js';
import { makeDocument, publishedReads } from './factories.js';

const revisionOf = (engine: StoreEngine, tenantId: string) =>
  engine
    .statement<unknown, { tenantId: string }>(engine.orm.select({ revision: portfolios.revision }).from(portfolios).where(eq(portfolios.tenantId, sql.placeholder('tenantId'))))
    .value({ tenantId }) as Promise<number | undefined>;

async function rowCounts(engine: StoreEngine, tenantId: string) {
  const countOf = (table: typeof portfolios | typeof assets | typeof portfolioItems) =>
    engine.statement(engine.orm.select({ rows: count() }).from(table).where(eq(table.tenantId, tenantId))).value({});
  return { portfolios: await countOf(portfolios), assets: await countOf(assets), items: await countOf(portfolioItems) };
}

describe.each(storeEngines)('portfolio stores on $name', (engineCase) => {
  let opened: OpenedEngine;
  let engine: StoreEngine;
  let at: number;
  const now = () => at;
  let tenantId: string;

  beforeEach(async () => {
    opened = await engineCase.open({ retryDelayMs: () => 0 });
    engine = opened.engine;
    at = Date.UTC(2026, 10, 23, 9, 41);
    tenantId = (await createTenantStore(engine, { now }).createTenant('  Main  ', { id: 'ten_main' })).id;
  });
  afterEach(() => opened.close());

  it('creates, reads and lists tenants oldest first, and refuses a name or id it cannot store', async () => {
    const tenants = createTenantStore(engine, { now, randomBytes: (size) => new Uint8Array(size).fill(0) });
    at += 1;
    const { id } = await tenants.createTenant('Second');
    expect(id).toBe(`ten_${'A'.repeat(20)}`);
    expect(await tenants.getTenant('ten_main')).toEqual({ id: 'ten_main', name: 'Main', createdAt: at - 1 });
    expect(await tenants.getTenant('ten_missing')).toBeUndefined();
    expect((await tenants.listTenants()).map((tenant) => tenant.id)).toEqual(['ten_main', id]);
    await expect(tenants.createTenant(' ')).rejects.toThrow(/non-empty name/);
    await expect(tenants.createTenant('Bad', { id: 'tenant-1' })).rejects.toThrow(StoreError);
  });

  it('stores an API key by its hash, finds it as the hot path reads it, revokes it once and lists keys with their state', async () => {
    const keys = createApiKeyStore(engine, { now });
    const minted = mintApiKey();
    const { id } = await keys.createApiKey({ tenantId, keyHash: minted.keyHash, keyPrefix: minted.keyPrefix, expiresAt: at + 60_000, rateLimit: 7 });
    expect(await keys.findApiKeyByHash(minted.keyHash)).toEqual({ id, tenantId, expiresAt: at + 60_000, revokedAt: null, rateLimit: 7 });
    expect(await keys.findApiKeyByHash(mintApiKey().keyHash)).toBeUndefined();

    const plain = mintApiKey();
    at += 1;
    const second = await keys.createApiKey({ tenantId, keyHash: plain.keyHash, keyPrefix: plain.keyPrefix });
    expect(await keys.findApiKeyByHash(plain.keyHash)).toEqual({ id: second.id, tenantId, expiresAt: null, revokedAt: null, rateLimit: null });

    at += 1;
    const revokedAt = at;
    expect(await keys.revokeApiKey(second.id)).toEqual({ id: second.id, revokedAt });
    at += 1;
    expect(await keys.revokeApiKey(second.id)).toEqual({ id: second.id, revokedAt });
    expect((await keys.findApiKeyByHash(plain.keyHash))?.revokedAt).toBe(revokedAt);
    await expect(keys.revokeApiKey('key_missing')).rejects.toThrow(expect.objectContaining({ code: 'api_key_not_found' }));

    at += 60_000;
    expect((await keys.listApiKeys(tenantId)).map((key) => [key.id, key.prefix, key.state])).toEqual([
      [id, minted.keyPrefix, 'expired'],
      [second.id, plain.keyPrefix, 'revoked'],
    ]);
    expect(await keys.listApiKeys('ten_missing')).toEqual([]);
  });

  it('refuses a key for an unknown tenant, a hash stored already and a rate limit below 1, storing nothing', async () => {
    const keys = createApiKeyStore(engine, { now });
    const minted = mintApiKey();
    await expect(keys.createApiKey({ tenantId: 'ten_missing', keyHash: minted.keyHash, keyPrefix: minted.keyPrefix })).rejects.toThrow(
      expect.objectContaining({ code: 'tenant_not_found' }),
    );
    await keys.createApiKey({ tenantId, keyHash: minted.keyHash, keyPrefix: minted.keyPrefix });
    await expect(keys.createApiKey({ tenantId, keyHash: minted.keyHash, keyPrefix: minted.keyPrefix })).rejects.toThrow();
    await expect(keys.createApiKey({ tenantId, keyHash: mintApiKey().keyHash, keyPrefix: 'pfk_x', rateLimit: 0 })).rejects.toThrow(/positive integer/);
    expect(await engine.statement(engine.orm.select({ rows: count() }).from(apiKeys)).value({})).toBe(1);
  });

  it('revokes a key once when two instances revoke it at the same time: both answer the time that was stored', async () => {
    const minted = mintApiKey();
    const { id } = await createApiKeyStore(engine, { now }).createApiKey({ tenantId, keyHash: minted.keyHash, keyPrefix: minted.keyPrefix });
    // SQLite's second connection in one process would wait for the first's lock synchronously: one connection, as one process has.
    const otherEngine = engineCase.name === 'PostgreSQL' ? await opened.openAnother() : engine;
    const first = createApiKeyStore(engine, { now: () => 1_000 });
    const second = createApiKeyStore(otherEngine, { now: () => 2_000 });
    const [a, b] = await Promise.all([first.revokeApiKey(id), second.revokeApiKey(id)]);
    expect(a).toEqual(b);
    expect((await first.findApiKeyByHash(minted.keyHash))?.revokedAt).toBe(a.revokedAt);
  });

  it('serves an imported portfolio: document, profile, list pages with their totals, items by slug, published only', async () => {
    const summary = await importPortfolio(engine, tenantId, makeDocument(), now);
    expect(summary).toMatchObject({ tenantId, published: true, updatedAt: at, assets: 2, items: { posts: { total: 3, published: 2 } } });
    const reads = publishedReads(engine);

    expect((await reads.document(tenantId))?.posts.map((post) => post.slug)).toEqual(['post-one', 'post-two']);
    expect((await reads.profile(tenantId))?.name).toBe('Sam Doe');
    expect(await reads.list(tenantId, 'post', { limit: 1, offset: 0 })).toEqual({
      items: [expect.objectContaining({ slug: 'post-one' })],
      paging: { limit: 1, offset: 0, total: 2, hasMore: true, nextOffset: 1 },
    });
    expect(await reads.list(tenantId, 'post', { limit: 1, offset: 1 })).toMatchObject({
      items: [{ slug: 'post-two' }],
      paging: { total: 2, hasMore: false, nextOffset: null },
    });
    expect(await reads.list(tenantId, 'post', { limit: 20, offset: 500 })).toMatchObject({ items: [], paging: { total: 2 } });
    expect((await reads.list(tenantId, 'page', { limit: 20, offset: 0 }))?.items).toEqual([{ slug: 'about', title: 'About', description: 'About Sam' }]);
    expect((await reads.bySlug(tenantId, 'page', 'about'))?.blocks).toHaveLength(6);
    expect(await reads.bySlug(tenantId, 'post', 'post-draft')).toBeUndefined();
    expect(await reads.bySlug(tenantId, 'post', 'about')).toBeUndefined();

    const hidden = (await createTenantStore(engine).createTenant('Hidden')).id;
    await importPortfolio(engine, hidden, makeDocument({ published: false }), now);
    for (const id of [hidden, 'ten_unknown']) {
      expect(await reads.document(id)).toBeUndefined();
      expect(await reads.profile(id)).toBeUndefined();
      expect(await reads.list(id, 'post', { limit: 20, offset: 0 })).toBeUndefined();
      expect(await reads.bySlug(id, 'post', 'post-one')).toBeUndefined();
    }
  });

  it('raises the revision on every re-import (the triggers of both engines), so another instance serves the new content at once', async () => {
    const sixBytes = new Uint8Array(6).fill(1);
    await importPortfolio(engine, tenantId, makeDocument(), now, { randomBytes: (size) => (size === 6 ? sixBytes : new Uint8Array(size).fill(7)) });
    const first = (await revisionOf(engine, tenantId))!;
    expect(first).toBeGreaterThanOrEqual(0x01_01_01_01_01_01);

    const otherInstance = publishedReads(await opened.openAnother());
    expect((await otherInstance.profile(tenantId))?.name).toBe('Sam Doe');
    expect((await otherInstance.document(tenantId))?.profile.name).toBe('Sam Doe');
    const firstPage = await otherInstance.list(tenantId, 'post', { limit: 20, offset: 0 });

    await importPortfolio(engine, tenantId, makeDocument({ profile: { name: 'Renamed', headline: '', bioSummary: '' }, posts: [] }), now);
    expect(await revisionOf(engine, tenantId)).toBeGreaterThan(first);
    expect((await otherInstance.document(tenantId))?.profile.name).toBe('Renamed');
    expect(firstPage?.paging.total).toBe(2);
    expect((await otherInstance.list(tenantId, 'post', { limit: 20, offset: 0 }))?.paging.total).toBe(0);

    // A change that leaves the portfolio row's own values as they were still raises it.
    const before = (await revisionOf(engine, tenantId))!;
    await engine.write(() =>
      engine.statement(engine.orm.update(portfolios).set({ updatedAt: sql`${portfolios.updatedAt}` }).where(eq(portfolios.tenantId, tenantId))).run({}),
    );
    expect(await revisionOf(engine, tenantId)).toBe(before + 1);
  });

  it('exports what was imported and imports the export back unchanged; a failed replace leaves the previous portfolio', async () => {
    expect(await exportPortfolio(engine, tenantId)).toBeUndefined();
    await expect(exportPortfolio(engine, 'ten_missing')).rejects.toThrow(StoreError);
    await expect(importPortfolio(engine, 'ten_missing', makeDocument(), now)).rejects.toThrow(StoreError);

    await importPortfolio(engine, tenantId, makeDocument(), now);
    const exported = await exportPortfolio(engine, tenantId);
    expect(exported?.assets.map((asset) => asset.id)).toEqual(['ast_avatar', 'ast_cover']);
    expect(exported?.assets[1]).toMatchObject({ width: null, height: null });
    expect(exported?.posts.map((post) => [post.slug, post.published])).toEqual([
      ['post-one', true],
      ['post-draft', false],
      ['post-two', true],
    ]);
    at += 1000;
    await importPortfolio(engine, tenantId, JSON.parse(JSON.stringify(exported)), now);
    expect(await exportPortfolio(engine, tenantId)).toEqual(exported);

    const counts = await rowCounts(engine, tenantId);
    const revision = await revisionOf(engine, tenantId);
    const broken = renderPortfolio(normalizePortfolioDocument(makeDocument({ posts: [] }) as unknown as PortfolioDocumentInput), at);
    const post = { kind: 'post' as const, id: null, slug: 'same', published: true, source: {}, rendered: {}, summary: null };
    broken.items.push({ ...post, position: 0 }, { ...post, position: 1 });
    await expect(createPortfolioDocumentStore(engine).replace(tenantId, broken)).rejects.toThrow();
    expect(await rowCounts(engine, tenantId)).toEqual(counts);
    expect(await revisionOf(engine, tenantId)).toBe(revision);
    expect(await exportPortfolio(engine, tenantId)).toEqual(exported);
  });
});
