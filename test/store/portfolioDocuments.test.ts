// The store's side of an import and an export: one transaction that replaces the whole portfolio
// or leaves it as it was, and the import forms read back.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { normalizePortfolioDocument } from '../../src/portfolio/import/normalizeImport.js';
import { renderPortfolio } from '../../src/portfolio/import/renderPortfolio.js';
import type { PortfolioDocumentInput } from '../../src/portfolio/import/importFormat.js';
import { StoreError } from '../../src/store/errors.js';
import { createPortfolioDocumentStore, type StoredPortfolio } from '../../src/store/portfolioDocuments.js';
import { contentCounts, makeDatabase, makeDocument, makeTenant, type TempDatabase } from './factories.js';

let t: TempDatabase;
let tenantId: string;

const stored = (overrides: Record<string, unknown> = {}, updatedAt = Date.UTC(2025, 0, 1)): StoredPortfolio =>
  renderPortfolio(normalizePortfolioDocument(makeDocument(overrides) as unknown as PortfolioDocumentInput), updatedAt);
const revisionOf = (id: string) => t.db.prepare('SELECT revision FROM portfolios WHERE tenant_id = ?').pluck().get(id) as number | undefined;

beforeEach(async () => {
  t = makeDatabase();
  tenantId = await makeTenant(t.db);
});
afterEach(() => t.cleanup());

describe('portfolio documents in the store', () => {
  it('reads back what it replaced: the profile, the assets in order and each kind in display order, in import form', async () => {
    const store = createPortfolioDocumentStore(t.db);
    const portfolio = stored();
    await store.replace(tenantId, portfolio);
    const sources = await store.read(tenantId);
    expect(sources?.published).toBe(true);
    expect(sources?.profile).toEqual(portfolio.profileSource);
    expect(sources?.assets.map((asset) => asset.id)).toEqual(['ast_avatar', 'ast_cover']);
    expect((sources?.itemsByKind.get('post') as { slug: string }[]).map((post) => post.slug)).toEqual(['post-one', 'post-draft', 'post-two']);
    expect(sources?.itemsByKind.get('post')?.[1]).toEqual(portfolio.items.find((item) => item.slug === 'post-draft')?.source);
  });

  it('answers undefined for a tenant without a portfolio and refuses an unknown tenant, writing nothing', async () => {
    const store = createPortfolioDocumentStore(t.db);
    expect(await store.read(tenantId)).toBeUndefined();
    await expect(store.replace('ten_unknown', stored())).rejects.toThrow(StoreError);
    await expect(store.read('ten_unknown')).rejects.toThrow(StoreError);
    expect(contentCounts(t.db, 'ten_unknown')).toEqual({ portfolios: 0, assets: 0, items: 0 });
  });

  it('replaces everything in one transaction: a write that fails halfway leaves the previous portfolio and its revision', async () => {
    const store = createPortfolioDocumentStore(t.db);
    await store.replace(tenantId, stored());
    const before = { sources: await store.read(tenantId), counts: contentCounts(t.db, tenantId), revision: revisionOf(tenantId) };

    // Two posts with one slug get past nothing but the unique index, after the deletes and most inserts ran.
    const broken = stored({ posts: [] });
    const post = { kind: 'post' as const, id: null, slug: 'same', published: true, source: {}, rendered: {}, summary: null };
    broken.items.push({ ...post, position: 0 }, { ...post, position: 1 });
    await expect(store.replace(tenantId, broken)).rejects.toThrow(/UNIQUE/);

    expect(await store.read(tenantId)).toEqual(before.sources);
    expect(contentCounts(t.db, tenantId)).toEqual(before.counts);
    expect(revisionOf(tenantId)).toBe(before.revision);
  });

  it('starts a new portfolio at a random revision and raises it on every replace', async () => {
    const store = createPortfolioDocumentStore(t.db, { randomBytes: (size) => new Uint8Array(size).fill(1) });
    await store.replace(tenantId, stored());
    const first = revisionOf(tenantId)!;
    // 0x010101010101 plus what the item and asset triggers (migration 0005) add.
    expect(first).toBeGreaterThanOrEqual(0x01_01_01_01_01_01);
    await store.replace(tenantId, stored({ published: false }));
    expect(revisionOf(tenantId)!).toBeGreaterThan(first);
    expect((await store.read(tenantId))?.published).toBe(false);
  });
});
