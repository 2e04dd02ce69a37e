import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exportPortfolio, importPortfolio } from '../../src/portfolio/import/importPortfolio.js';
import {
  importFormatSchemaPath,
  PortfolioImportError,
  validatePortfolioDocument,
  type ImportProblem,
} from '../../src/portfolio/import/validateImport.js';
import { StoreError } from '../../src/store/errors.js';
import { contentCounts, makeClock, makeDatabase, makeDocument, makeTenant, repoRoot, type TempDatabase } from '../store/factories.js';

let t: TempDatabase;
let tenantId: string;
const clock = makeClock(Date.UTC(2025, 2, 1, 0, 0, 0));

beforeEach(async () => {
  t = makeDatabase();
  tenantId = await makeTenant(t.db);
});
afterEach(() => t.cleanup());

async function importProblems(document: unknown): Promise<ImportProblem[]> {
  try {
    await importPortfolio(t.db, tenantId, document, clock.now);
  } catch (error) {
    expect(error).toBeInstanceOf(PortfolioImportError);
    return (error as PortfolioImportError).details;
  }
  throw new Error('the import was accepted');
}

const paths = (problems: ImportProblem[]) => problems.map((problem) => problem.path);

describe('the import format schema', () => {
  it('lives at specs/portfolio/import-format.schema.json, is 2020-12 and documents every member', () => {
    expect(path.relative(repoRoot, importFormatSchemaPath.pathname)).toBe('specs/portfolio/import-format.schema.json');
    const schema = JSON.parse(readFileSync(importFormatSchemaPath, 'utf8')) as Record<string, unknown>;
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    const undocumented: string[] = [];
    const walk = (node: unknown, at: string): void => {
      if (Array.isArray(node)) return node.forEach((child, index) => walk(child, `${at}/${index}`));
      if (typeof node !== 'object' || node === null) return;
      const record = node as Record<string, unknown>;
      if (record.properties && typeof record.properties === 'object') {
        for (const [name, member] of Object.entries(record.properties as Record<string, Record<string, unknown>>)) {
          if (typeof member.description !== 'string' || member.description.length < 3) undocumented.push(`${at}/properties/${name}`);
        }
      }
      if (record.items && typeof record.items === 'object' && !('$ref' in record.items) && typeof (record.items as Record<string, unknown>).description !== 'string') {
        undocumented.push(`${at}/items`);
      }
      for (const [key, child] of Object.entries(record)) walk(child, `${at}/${key}`);
    };
    walk(schema, '');
    expect(undocumented).toEqual([]);
  });
});

describe('importPortfolio', () => {
  it('stores the document and reports what it holds', async () => {
    const summary = await importPortfolio(t.db, tenantId, makeDocument(), clock.now);
    expect(summary).toMatchObject({ tenantId, published: true, updatedAt: clock.now(), assets: 2 });
    expect(summary.items.posts).toEqual({ total: 3, published: 2 });
    expect(summary.items.links).toEqual({ total: 2, published: 1 });
    expect(summary.items.education).toEqual({ total: 1, published: 1 });
    expect(contentCounts(t.db, tenantId)).toEqual({ portfolios: 1, assets: 2, items: 14 });
  });

  it('fills in defaults and generates prefixed ids for list items without one', async () => {
    await importPortfolio(t.db, tenantId, makeDocument(), clock.now);
    const exported = await exportPortfolio(t.db, tenantId);
    expect(exported?.assets[1]).toEqual({ id: 'ast_cover', url: 'https://media.example.com/cover.png', altText: '', mimeType: 'image/png', width: null, height: null });
    expect(exported?.outcomes[1]).toMatchObject({ client: null, metrics: [], coverImage: null, tags: [] });
    expect(exported?.posts[0]?.updatedAt).toBe('2025-01-01T10:00:00Z');
    expect(exported?.pages[0]?.blocks[4]).toEqual({ type: 'quote', text: 'Quote', attribution: null });
    expect(exported?.experience[0]).toMatchObject({ id: 'exp_one', location: null, endDate: null, highlights: [] });
    expect(exported?.skills[0]?.id).toMatch(/^skl_[A-Za-z0-9]+$/);
    expect(exported?.stats[0]?.id).toMatch(/^sta_[A-Za-z0-9]+$/);
    expect(exported?.awards[0]?.id).toMatch(/^awd_[A-Za-z0-9]+$/);
    expect(exported?.education[0]).toMatchObject({ id: expect.stringMatching(/^crd_/), startDate: null, endDate: null, url: null, description: null });
    expect(exported?.testimonials[0]).toMatchObject({ id: expect.stringMatching(/^tst_/), authorRole: null, authorCompany: null });
  });

  it('round-trips: export → import → export gives identical JSON', async () => {
    await importPortfolio(t.db, tenantId, makeDocument(), clock.now);
    const first = JSON.stringify(await exportPortfolio(t.db, tenantId));
    clock.advance(1000);
    await importPortfolio(t.db, tenantId, JSON.parse(first), clock.now);
    const second = JSON.stringify(await exportPortfolio(t.db, tenantId));
    expect(second).toBe(first);
    expect(Object.keys(JSON.parse(first))).toEqual([
      'formatVersion', 'published', 'profile', 'assets', 'outcomes', 'posts', 'pages',
      'experience', 'skills', 'stats', 'awards', 'education', 'testimonials', 'links',
    ]);
  });

  it('round-trips sanitized HTML unchanged (sanitizing is idempotent)', async () => {
    const bodyHtml = '<h1>T</h1><p class="x">a <a href="https://x.example/?a=1&amp;b=2" title="t" target="_blank">l</a> &amp; <img src="https://x.example/i.png" width="10" onerror="x()"></p>';
    await importPortfolio(t.db, tenantId, makeDocument({ posts: [{ slug: 'p', published: true, title: 'T', excerpt: '', bodyHtml, publishedAt: '2025-01-01T00:00:00Z' }] }), clock.now);
    const first = await exportPortfolio(t.db, tenantId);
    await importPortfolio(t.db, tenantId, first, clock.now);
    expect(await exportPortfolio(t.db, tenantId)).toEqual(first);
    expect(first?.posts[0]?.bodyHtml).toBe(
      '<h2>T</h2><p>a <a href="https://x.example/?a=1&amp;b=2" title="t" rel="nofollow noopener noreferrer">l</a> &amp; <img src="https://x.example/i.png" alt="" width="10" /></p>',
    );
  });

  it('replaces the whole portfolio: items missing from the new document are gone', async () => {
    await importPortfolio(t.db, tenantId, makeDocument(), clock.now);
    await importPortfolio(t.db, tenantId, makeDocument({ posts: [], links: [], assets: [], profile: { name: 'New', headline: '', bioSummary: '' }, outcomes: [], pages: [], testimonials: [] }), clock.now);
    const exported = await exportPortfolio(t.db, tenantId);
    expect(exported?.posts).toEqual([]);
    expect(exported?.assets).toEqual([]);
    expect(exported?.profile).toEqual({ name: 'New', headline: '', bioSummary: '', location: null, avatar: null });
  });

  it('refuses a bad document naming each failing path, and writes nothing', async () => {
    await importPortfolio(t.db, tenantId, makeDocument(), clock.now);
    const before = await exportPortfolio(t.db, tenantId);
    const countsBefore = contentCounts(t.db, tenantId);
    const document = makeDocument({
      formatVersion: 2,
      posts: [
        { slug: 'ok-post', published: true, title: 'Ok', excerpt: '', bodyHtml: '', publishedAt: '2025-01-01T00:00:00Z' },
        { slug: 'Not A Slug', published: true, title: '', excerpt: '', bodyHtml: '', publishedAt: 'yesterday' },
        { slug: 'ok-post', published: true, title: 'Dup', excerpt: '', bodyHtml: '', publishedAt: '2025-01-01T00:00:00Z', coverImage: 'ast_missing' },
        { slug: 'no-title', published: 'yes', excerpt: '', bodyHtml: '', publishedAt: '2025-01-01T00:00:00Z', color: 'red' },
      ],
      links: [
        { id: 'lnk_a', published: true, kind: 'website', label: 'A', url: 'javascript:alert(1)' },
        { id: 'lnk_a', published: true, kind: 'fax', label: 'B', url: 'https://b.example' },
      ],
    });
    const problems = await importProblems(document);
    expect(paths(problems)).toEqual(
      expect.arrayContaining([
        '/formatVersion',
        '/posts/1/slug',
        '/posts/1/title',
        '/posts/1/publishedAt',
        '/posts/2/slug',
        '/posts/2/coverImage',
        '/posts/3/title',
        '/posts/3/published',
        '/posts/3/color',
        '/links/0/url',
        '/links/1/id',
        '/links/1/kind',
      ]),
    );
    expect(problems.find((problem) => problem.path === '/posts/2/slug')?.message).toMatch(/duplicates the slug of \/posts\/0/);
    expect(problems.find((problem) => problem.path === '/posts/2/coverImage')?.message).toMatch(/ast_missing/);
    expect(problems.find((problem) => problem.path === '/posts/3/title')?.message).toBe('is required');
    // Worded by the pipeline's one translation of Ajv errors, as the APIs word a request's.
    expect(problems.find((problem) => problem.path === '/posts/1/slug')?.message).toBe(
      'must be lowercase letters and digits in groups joined by single hyphens, like "my-first-post"',
    );
    expect(problems.find((problem) => problem.path === '/posts/3/published')?.message).toBe('must be true or false');
    expect(problems.find((problem) => problem.path === '/posts/3/color')?.message).toBe('is not a recognized field');
    expect(problems.find((problem) => problem.path === '/links/1/kind')?.message).toMatch(/^must be one of website, /);
    expect(problems.find((problem) => problem.path === '/links/0/url')?.message).toMatch(/javascript/);
    expect(await exportPortfolio(t.db, tenantId)).toEqual(before);
    expect(contentCounts(t.db, tenantId)).toEqual(countsBefore);
  });

  it('writes nothing for a new tenant either', async () => {
    await importProblems(makeDocument({ profile: { name: 'x' } }));
    expect(contentCounts(t.db, tenantId)).toEqual({ portfolios: 0, assets: 0, items: 0 });
    expect(await exportPortfolio(t.db, tenantId)).toBeUndefined();
  });

  it('carries the problems in the error message too', async () => {
    await expect(importPortfolio(t.db, tenantId, { formatVersion: 1 }, clock.now)).rejects.toThrow(/\/published is required/);
    expect(validatePortfolioDocument('not an object')).toEqual([{ path: '', message: 'must be an object' }]);
  });

  it.each([
    ['an asset id used twice', { assets: [{ id: 'ast_a', url: 'https://a.example/a.png', altText: '', mimeType: 'image/png' }, { id: 'ast_a', url: 'https://a.example/b.png', altText: '', mimeType: 'image/png' }], profile: { name: 'n', headline: '', bioSummary: '' }, outcomes: [], pages: [], testimonials: [] }, '/assets/1/id'],
    ['an asset URL that is not http(s)', { assets: [{ id: 'ast_avatar', url: 'data:image/png;base64,AAAA', altText: '', mimeType: 'image/png' }, { id: 'ast_cover', url: 'https://a.example/c.png', altText: '', mimeType: 'image/png' }] }, '/assets/0/url'],
    ['a protocol-relative asset URL', { assets: [{ id: 'ast_avatar', url: '//a.example/a.png', altText: '', mimeType: 'image/png' }, { id: 'ast_cover', url: 'https://a.example/c.png', altText: '', mimeType: 'image/png' }] }, '/assets/0/url'],
    ['a missing avatar asset', { profile: { name: 'n', headline: '', bioSummary: '', avatar: 'ast_nope' } }, '/profile/avatar'],
    ['a missing gallery asset', { pages: [{ slug: 'g', published: true, title: 'G', blocks: [{ type: 'gallery', images: ['ast_cover', 'ast_nope'] }] }] }, '/pages/0/blocks/0/images/1'],
    ['a missing image-block asset', { pages: [{ slug: 'g', published: true, title: 'G', blocks: [{ type: 'image', image: 'ast_nope' }] }] }, '/pages/0/blocks/0/image'],
    ['an unknown block type', { pages: [{ slug: 'g', published: true, title: 'G', blocks: [{ type: 'video', src: 'x' }] }] }, '/pages/0/blocks/0/type'],
    ['a call to action with a javascript: URL', { pages: [{ slug: 'g', published: true, title: 'G', blocks: [{ type: 'callToAction', label: 'Go', url: 'JavaScript:alert(1)' }] }] }, '/pages/0/blocks/0/url'],
    ['a duplicate page slug', { pages: [{ slug: 'g', published: true, title: 'G', blocks: [] }, { slug: 'g', published: false, title: 'G2', blocks: [] }] }, '/pages/1/slug'],
    ['a duplicate experience id', { experience: [{ id: 'exp_a', published: true, organization: 'o', role: 'r', startDate: '2020-01-01', summary: '' }, { id: 'exp_a', published: true, organization: 'o', role: 'r', startDate: '2020-01-01', summary: '' }] }, '/experience/1/id'],
    ['an id with the wrong prefix', { skills: [{ id: 'exp_a', published: true, name: 'n' }] }, '/skills/0/id'],
    ['an end date before the start date', { education: [{ published: true, kind: 'education', title: 't', institution: 'i', startDate: '2020-01-01', endDate: '2019-01-01' }] }, '/education/0/endDate'],
    ['an award URL with an ftp scheme', { awards: [{ published: true, title: 't', issuer: 'i', awardedOn: '2020-01-01', url: 'ftp://a.example/x' }] }, '/awards/0/url'],
    ['an invalid date', { awards: [{ published: true, title: 't', issuer: 'i', awardedOn: '2020-02-30' }] }, '/awards/0/awardedOn'],
    ['a missing testimonial avatar asset', { testimonials: [{ published: true, quote: 'q', authorName: 'a', avatar: 'ast_gone' }] }, '/testimonials/0/avatar'],
    ['a heading level out of range', { pages: [{ slug: 'g', published: true, title: 'G', blocks: [{ type: 'heading', level: 7, text: 'x' }] }] }, '/pages/0/blocks/0/level'],
  ])('refuses %s', async (_name, overrides, expectedPath) => {
    expect(paths(await importProblems(makeDocument(overrides)))).toContain(expectedPath);
    expect(contentCounts(t.db, tenantId).portfolios).toBe(0);
  });

  it('accepts mailto links and upper-case http schemes', () => {
    expect(
      validatePortfolioDocument(
        makeDocument({ links: [{ published: true, kind: 'email', label: 'm', url: 'mailto:a@b.example' }, { published: true, kind: 'website', label: 'w', url: 'HTTPS://b.example/' }] }),
      ),
    ).toEqual([]);
  });

  it('refuses an unknown tenant without writing', async () => {
    await expect(importPortfolio(t.db, 'ten_missing', makeDocument(), clock.now)).rejects.toThrow(StoreError);
    expect(contentCounts(t.db, 'ten_missing')).toEqual({ portfolios: 0, assets: 0, items: 0 });
  });

  it('exports undefined for a tenant without a portfolio, and refuses an unknown tenant', async () => {
    expect(await exportPortfolio(t.db, tenantId)).toBeUndefined();
    await expect(exportPortfolio(t.db, 'ten_missing')).rejects.toThrow(/No tenant/);
  });
});
