import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { importPortfolio } from '../../src/portfolio/import/importPortfolio.js';
import { contractErrors, makeClock, makeDatabase, makeDocument, makeTenant, publishedReads, type TempDatabase } from './factories.js';

let t: TempDatabase;
let tenantId: string;
const clock = makeClock(Date.UTC(2025, 5, 1, 8, 30, 0));

beforeEach(async () => {
  t = makeDatabase();
  tenantId = await makeTenant(t.db);
  await importPortfolio(t.db, tenantId, makeDocument(), clock.now);
});
afterEach(() => t.cleanup());

describe('portfolio reader', () => {
  it('serves the whole published document, valid against the contract, with only published items', async () => {
    const document = await publishedReads(t.db).document(tenantId);
    expect(contractErrors('PortfolioResponse', document)).toEqual([]);
    expect(document?.posts.map((post) => post.slug)).toEqual(['post-one', 'post-two']);
    expect(document?.outcomes.map((outcome) => outcome.slug)).toEqual(['first-outcome']);
    expect(document?.links.map((link) => link.id)).toEqual(['lnk_site']);
    expect(document?.profile.updatedAt).toBe('2025-06-01T08:30:00.000Z');
    expect(document?.profile.avatar).toEqual({
      id: 'ast_avatar',
      url: 'https://media.example.com/sam.webp',
      altText: 'Sam',
      mimeType: 'image/webp',
      width: 400,
      height: 400,
    });
  });

  it('serves the profile', async () => {
    const profile = await publishedReads(t.db).profile(tenantId);
    expect(contractErrors('ProfileItem', profile)).toEqual([]);
    expect(profile?.name).toBe('Sam Doe');
  });

  it('lists published items in display order with the published total, paged', async () => {
    const reads = publishedReads(t.db);
    expect(await reads.list(tenantId, 'post', { limit: 1, offset: 0 })).toEqual({
      items: [expect.objectContaining({ slug: 'post-one' })],
      paging: { limit: 1, offset: 0, total: 2, hasMore: true, nextOffset: 1 },
    });
    expect((await reads.list(tenantId, 'post', { limit: 1, offset: 1 }))?.items.map((post) => post.slug)).toEqual(['post-two']);
    expect(await reads.list(tenantId, 'post', { limit: 20, offset: 2 })).toMatchObject({ items: [], paging: { total: 2, hasMore: false } });
    expect(await reads.list(tenantId, 'post', { limit: 20, offset: 500 })).toMatchObject({ items: [], paging: { total: 2, nextOffset: null } });
    expect((await reads.list(tenantId, 'award', { limit: 20, offset: 0 }))?.paging.total).toBe(1);
    expect((await reads.list(tenantId, 'link', { limit: 20, offset: 0 }))?.items).toEqual([
      { id: 'lnk_site', kind: 'website', label: 'Site', url: 'https://sam.example.com' },
    ]);
  });

  it('lists pages as summaries without blocks', async () => {
    const page = await publishedReads(t.db).list(tenantId, 'page', { limit: 20, offset: 0 });
    expect(page?.items).toEqual([{ slug: 'about', title: 'About', description: 'About Sam' }]);
    expect(page?.paging.total).toBe(1);
    expect(contractErrors('PageSummary', page?.items[0])).toEqual([]);
  });

  it('finds published items by slug with assets resolved, and not unpublished ones', async () => {
    const reads = publishedReads(t.db);
    const about = await reads.bySlug(tenantId, 'page', 'about');
    expect(contractErrors('PageItem', about)).toEqual([]);
    expect(about?.blocks.map((block) => block.type)).toEqual(['heading', 'richText', 'image', 'gallery', 'quote', 'callToAction']);
    expect(about?.blocks[3]).toMatchObject({ type: 'gallery', images: [{ id: 'ast_cover' }, { id: 'ast_avatar' }] });
    expect(contractErrors('OutcomeItem', await reads.bySlug(tenantId, 'outcome', 'first-outcome'))).toEqual([]);
    expect(contractErrors('PostItem', await reads.bySlug(tenantId, 'post', 'post-two'))).toEqual([]);
    expect(await reads.bySlug(tenantId, 'post', 'post-draft')).toBeUndefined();
    expect(await reads.bySlug(tenantId, 'outcome', 'hidden-outcome')).toBeUndefined();
    expect(await reads.bySlug(tenantId, 'post', 'missing')).toBeUndefined();
    expect(await reads.bySlug(tenantId, 'post', 'about')).toBeUndefined(); // a page slug is not a post
  });

  it('answers undefined everywhere for an unpublished portfolio, a tenant without one, and an unknown tenant', async () => {
    const reads = publishedReads(t.db);
    const hidden = await makeTenant(t.db, 'Hidden');
    await importPortfolio(t.db, hidden, makeDocument({ published: false }), clock.now);
    const empty = await makeTenant(t.db, 'Empty');
    for (const id of [hidden, empty, 'ten_unknown']) {
      expect(await reads.document(id)).toBeUndefined();
      expect(await reads.profile(id)).toBeUndefined();
      expect(await reads.list(id, 'post', { limit: 20, offset: 0 })).toBeUndefined();
      expect(await reads.bySlug(id, 'post', 'post-one')).toBeUndefined();
    }
  });

  it('never mixes tenants', async () => {
    const reads = publishedReads(t.db);
    const other = await makeTenant(t.db, 'Other');
    await importPortfolio(
      t.db,
      other,
      makeDocument({
        posts: [{ slug: 'post-one', published: true, title: 'Other post one', excerpt: '', bodyHtml: '', publishedAt: '2025-01-01T00:00:00Z' }],
      }),
      clock.now,
    );
    expect((await reads.bySlug(tenantId, 'post', 'post-one'))?.title).toBe('Post one');
    expect((await reads.bySlug(other, 'post', 'post-one'))?.title).toBe('Other post one');
    expect((await reads.list(other, 'post', { limit: 20, offset: 0 }))?.paging.total).toBe(1);
    expect((await reads.list(tenantId, 'post', { limit: 20, offset: 0 }))?.paging.total).toBe(2);
    expect(await reads.bySlug(other, 'post', 'post-two')).toBeUndefined();
  });

  it('sees a new import immediately', async () => {
    const reads = publishedReads(t.db);
    expect((await reads.list(tenantId, 'post', { limit: 20, offset: 0 }))?.paging.total).toBe(2);
    await importPortfolio(t.db, tenantId, makeDocument({ posts: [] }), clock.now);
    expect(await reads.list(tenantId, 'post', { limit: 20, offset: 0 })).toMatchObject({ items: [], paging: { total: 0 } });
    await importPortfolio(t.db, tenantId, makeDocument({ published: false }), clock.now);
    expect(await reads.document(tenantId)).toBeUndefined();
  });
});
