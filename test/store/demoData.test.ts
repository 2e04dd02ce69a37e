import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { demoTenants, loadDemoData } from '../../src/demo/demoData.js';
import { exportPortfolio } from '../../src/portfolio/import/importPortfolio.js';
import { validatePortfolioDocument } from '../../src/portfolio/import/validateImport.js';
import { hashApiKey } from '../../src/auth/apiKeyFormat.js';
import { createApiKeyStore } from '../../src/store/apiKeys.js';
import { createTenantStore } from '../../src/store/tenants.js';
import { contractErrors, makeClock, makeDatabase, publishedReads, type TempDatabase } from './factories.js';

let t: TempDatabase;
const clock = makeClock(Date.UTC(2025, 6, 1, 9, 0, 0));
beforeEach(() => {
  t = makeDatabase();
});
afterEach(() => t.cleanup());

describe('demo data set', () => {
  it('has valid import documents', () => {
    for (const tenant of Object.values(demoTenants)) expect(validatePortfolioDocument(tenant.document)).toEqual([]);
  });

  it('returns the fixture with exactly the documented members and working keys', async () => {
    const fixture = await loadDemoData(t.db, clock.now);
    expect(Object.keys(fixture)).toEqual(['portfolio', 'workPlatform']);
    expect(Object.keys(fixture.portfolio).sort()).toEqual(
      [
        'tenantId',
        'apiKey',
        'revokedApiKey',
        'expiredApiKey',
        'unpublishedApiKey',
        'otherTenantId',
        'otherTenantApiKey',
        'published',
        'unpublished',
        'otherTenantOnly',
      ].sort(),
    );
    const demo = fixture.portfolio;
    const keys = createApiKeyStore(t.db, { now: clock.now });
    const lookup = (key: string) => keys.findApiKeyByHash(hashApiKey(key));
    expect(await lookup(demo.apiKey)).toMatchObject({ tenantId: demo.tenantId, revokedAt: null, expiresAt: null });
    expect((await lookup(demo.revokedApiKey))?.revokedAt).not.toBeNull();
    expect((await lookup(demo.expiredApiKey))?.expiresAt).toBeLessThan(clock.now());
    expect((await lookup(demo.unpublishedApiKey))?.tenantId).toBe(demoTenants.unpublished.id);
    expect((await lookup(demo.otherTenantApiKey))?.tenantId).toBe(demo.otherTenantId);
    expect(demo.otherTenantId).not.toBe(demo.tenantId);
  });

  it('serves what the fixture promises', async () => {
    const demo = (await loadDemoData(t.db, clock.now)).portfolio;
    const reads = publishedReads(t.db);
    const document = await reads.document(demo.tenantId);
    expect(contractErrors('PortfolioResponse', document)).toEqual([]);

    expect(demo.published.outcomes).toContain('checkout-conversion-lift');
    expect(demo.published.posts).toContain('designing-for-trust');
    expect(demo.published.pages).toContain('about');
    expect(demo.published.posts.length).toBeGreaterThanOrEqual(25);
    for (const kind of ['outcomes', 'posts', 'pages'] as const) {
      expect(demo.unpublished[kind].length).toBeGreaterThan(0);
      expect(document?.[kind].map((item) => item.slug)).toEqual(demo.published[kind]);
    }
    const singular = { outcomes: 'outcome', posts: 'post', pages: 'page' } as const;
    for (const kind of ['outcomes', 'posts', 'pages'] as const) {
      for (const slug of demo.published[kind]) {
        const item = await reads.bySlug(demo.tenantId, singular[kind], slug);
        expect(item, `${kind}/${slug}`).toBeDefined();
      }
      for (const slug of demo.unpublished[kind]) {
        expect(await reads.bySlug(demo.tenantId, singular[kind], slug), `${kind}/${slug}`).toBeUndefined();
      }
    }
    for (const slug of demo.otherTenantOnly.posts) {
      expect(await reads.bySlug(demo.tenantId, 'post', slug)).toBeUndefined();
      expect(await reads.bySlug(demo.otherTenantId, 'post', slug)).toBeDefined();
    }
    expect(await reads.document(demoTenants.unpublished.id)).toBeUndefined();
    expect(contractErrors('PortfolioResponse', await reads.document(demo.otherTenantId))).toEqual([]);
  });

  it('interleaves unpublished posts with published ones, so paging skips them', async () => {
    const demo = (await loadDemoData(t.db, clock.now)).portfolio;
    const exported = await exportPortfolio(t.db, demo.tenantId);
    const flags = exported?.posts.map((post) => post.published) ?? [];
    const firstDraft = flags.indexOf(false);
    expect(firstDraft).toBeGreaterThan(0);
    expect(flags.lastIndexOf(true)).toBeGreaterThan(firstDraft);
    const reads = publishedReads(t.db);
    const first = await reads.list(demo.tenantId, 'post', { limit: 20, offset: 0 });
    const second = await reads.list(demo.tenantId, 'post', { limit: 20, offset: 20 });
    expect(first?.paging.total).toBe(demo.published.posts.length);
    expect([...(first?.items ?? []), ...(second?.items ?? [])].map((post) => post.slug)).toEqual(demo.published.posts);
  });

  it('has every list kind, every block kind and assets with and without dimensions', async () => {
    const demo = (await loadDemoData(t.db, clock.now)).portfolio;
    const document = await publishedReads(t.db).document(demo.tenantId);
    for (const list of ['outcomes', 'posts', 'pages', 'experience', 'skills', 'stats', 'awards', 'education', 'testimonials', 'links'] as const) {
      expect(document?.[list].length, list).toBeGreaterThan(0);
    }
    const blockTypes = new Set(document?.pages.flatMap((page) => page.blocks.map((block) => block.type)));
    expect([...blockTypes].sort()).toEqual(['callToAction', 'gallery', 'heading', 'image', 'quote', 'richText']);
    const exported = await exportPortfolio(t.db, demo.tenantId);
    expect(exported?.assets.some((asset) => asset.width !== null && asset.height !== null)).toBe(true);
    expect(exported?.assets.some((asset) => asset.width === null)).toBe(true);
  });

  it('shows the sanitizer at work on the XSS demo post', async () => {
    const demo = (await loadDemoData(t.db, clock.now)).portfolio;
    const post = await publishedReads(t.db).bySlug(demo.tenantId, 'post', 'sanitizing-rich-text-at-the-door');
    expect(post?.bodyHtml).toContain('<strong>bold</strong>');
    for (const pattern of [/<script/i, /onclick=/i, /onerror=/i, /onload=/i, /href="javascript/i, /<iframe/i, /srcdoc/i, /<svg/i, /style=/i, /formaction/i, /data:image/i]) {
      expect(post?.bodyHtml).not.toMatch(pattern);
    }
  });

  it('is idempotent: reloading keeps three demo tenants and the same content, and issues new keys', async () => {
    const first = await loadDemoData(t.db, clock.now);
    const countRows = () => ({
      tenants: t.db.prepare('SELECT count(*) FROM tenants').pluck().get(),
      items: t.db.prepare('SELECT count(*) FROM portfolio_items').pluck().get(),
      assets: t.db.prepare('SELECT count(*) FROM assets').pluck().get(),
    });
    const before = countRows();
    const exportedBefore = await exportPortfolio(t.db, first.portfolio.tenantId);
    clock.advance(60_000);
    const second = await loadDemoData(t.db, clock.now);
    expect(countRows()).toEqual(before);
    expect(before.tenants).toBe(3);
    expect(await exportPortfolio(t.db, second.portfolio.tenantId)).toEqual(exportedBefore);
    expect(second.portfolio.tenantId).toBe(first.portfolio.tenantId);
    expect(second.portfolio.apiKey).not.toBe(first.portfolio.apiKey);
    const keys = createApiKeyStore(t.db, { now: clock.now });
    expect((await keys.findApiKeyByHash(hashApiKey(first.portfolio.apiKey)))?.revokedAt).toBeNull();
    expect(second.portfolio.published).toEqual(first.portfolio.published);
  });

  it('leaves other tenants alone', async () => {
    const tenants = createTenantStore(t.db, { now: clock.now });
    const own = (await tenants.createTenant('Not a demo')).id;
    await loadDemoData(t.db, clock.now);
    expect((await tenants.listTenants()).map((tenant) => tenant.id)).toContain(own);
    expect(await exportPortfolio(t.db, own)).toBeUndefined();
  });
});
