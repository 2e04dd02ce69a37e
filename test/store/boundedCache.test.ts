// The process's one cache of encoded answers: one byte cap over every user, least recently used
// dropped first, and an answer served only at the revision it was built from.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { importPortfolio } from '../../src/portfolio/import/importPortfolio.js';
import { encodeListPage } from '../../src/portfolio/listPublished.js';
import { createBoundedCache } from '../../src/store/boundedCache.js';
import { createListPageCache } from '../../src/store/listPageCache.js';
import { createPortfolioReader } from '../../src/store/portfolioContent.js';
import { createTaskStore } from '../../src/store/tasks.js';
import { createProjectStore } from '../../src/store/projects.js';
import { makeDatabase, makeDocument, makeTenant, type TempDatabase } from './factories.js';
import { makeWorkspace } from './workPlatformFactories.js';

const answer = (text: string) => Buffer.from(text);
/** What one entry of `key` holding `bytes` bytes counts against the cap in `space`. */
const entrySize = (space: string, key: string, bytes: number) => {
  const probe = createBoundedCache({ maxBytes: 1024 * 1024 });
  probe.space(space).keep(key, 1, Buffer.alloc(bytes));
  return probe.bytes;
};

describe('the bounded cache', () => {
  it('serves an answer only at the revision it was built at, and drops one of another revision', () => {
    const cache = createBoundedCache({ maxBytes: 1024 * 1024 });
    const space = cache.space('answers');
    const kept = space.keep('a', 1, answer('one'));
    expect(space.get('a', 1)).toBe(kept);
    expect(space.get('a', 2)).toBeUndefined();
    expect(cache.entries).toBe(0);
    expect(cache.bytes).toBe(0);
    // Going back to the older revision finds nothing either: the stale entry is gone.
    expect(space.get('a', 1)).toBeUndefined();
    space.keep('a', 2, answer('two'));
    expect(space.get('a', 2)?.toString()).toBe('two');
    expect(cache.entries).toBe(1);
  });

  it('drops the least recently used entries when over its byte cap', () => {
    const size = entrySize('answers', 'a', 100);
    const cache = createBoundedCache({ maxBytes: 3 * size });
    const space = cache.space('answers');
    for (const key of ['a', 'b', 'c']) space.keep(key, 1, Buffer.alloc(100, key));
    expect(space.get('a', 1)).toBeDefined(); // a is now the most recently used; b the least
    space.keep('d', 1, Buffer.alloc(100, 'd'));
    expect(space.get('b', 1)).toBeUndefined();
    expect(['a', 'c', 'd'].map((key) => space.get(key, 1)?.[0])).toEqual([...'acd'].map((key) => key.charCodeAt(0)));
    expect(cache.bytes).toBe(3 * size);
  });

  it('keeps no answer larger than the whole cap, and nothing with a cap of 0', () => {
    const size = entrySize('answers', 'a', 100);
    const cache = createBoundedCache({ maxBytes: size });
    const space = cache.space('answers');
    space.keep('a', 1, Buffer.alloc(100));
    const larger = Buffer.alloc(101);
    expect(space.keep('b', 1, larger)).toBe(larger);
    expect(space.get('b', 1)).toBeUndefined();
    expect(space.get('a', 1)).toBeDefined(); // an answer that is not kept evicts nothing
    const none = createBoundedCache({ maxBytes: 0 }).space('answers');
    none.keep('a', 1, answer('x'));
    expect(none.get('a', 1)).toBeUndefined();
  });

  it('caps a space at its own entry count, dropping its own least recently used entry, not another space\'s', () => {
    const cache = createBoundedCache({ maxBytes: 1024 * 1024 });
    const pages = cache.space('pages', { maxEntries: 2 });
    const other = cache.space('other');
    other.keep('old', 1, answer('other'));
    pages.keep('a', 1, answer('a'));
    pages.keep('b', 1, answer('b'));
    pages.keep('c', 1, answer('c'));
    expect(pages.get('a', 1)).toBeUndefined();
    expect(pages.get('b', 1)?.toString()).toBe('b');
    expect(other.get('old', 1)?.toString()).toBe('other');
    const none = cache.space('none', { maxEntries: 0 });
    none.keep('a', 1, answer('a'));
    expect(none.get('a', 1)).toBeUndefined();
  });

  it('keeps spaces apart: the same key in two spaces is two entries, and a name is given out once', () => {
    const cache = createBoundedCache({ maxBytes: 1024 * 1024 });
    cache.space('one').keep('k', 1, answer('one'));
    cache.space('two').keep('k', 1, answer('two'));
    expect(cache.entries).toBe(2);
    expect(() => cache.space('one')).toThrow(/already has a space named "one"/);
  });

  it('keeps a copy of a small answer cut from Node\'s shared buffer pool, so it counts what it holds', () => {
    const space = createBoundedCache({ maxBytes: 1024 * 1024 }).space('answers');
    const pooled = Buffer.from('a small answer');
    expect(pooled.buffer.byteLength).toBeGreaterThan(pooled.length);
    const kept = space.keep('a', 1, pooled);
    expect(kept).not.toBe(pooled);
    expect(kept.equals(pooled)).toBe(true);
    expect(kept.buffer.byteLength).toBe(kept.length);
    const own = Buffer.alloc(16 * 1024);
    expect(space.keep('b', 1, own)).toBe(own);
  });
});

describe('one cap over the portfolio answers and the /v1 list pages', () => {
  let t: TempDatabase;
  beforeEach(() => {
    t = makeDatabase();
  });
  afterEach(() => t.cleanup());

  it("holds across both users: either one's new answers push out the other's least recently used ones", async () => {
    const tenantId = await makeTenant(t.db);
    await importPortfolio(t.db, tenantId, makeDocument(), Date.now);
    const workspace = await makeWorkspace(t.db);
    const project = await createProjectStore(t.db).createProject(workspace.workspaceId, { name: 'P' }, workspace.actor);

    const cap = 8 * 1024;
    const cache = createBoundedCache({ maxBytes: cap });
    const reader = createPortfolioReader(t.db, { cache });
    const listPages = createListPageCache(t.db, { cache, maxPages: 100 });
    const builds: string[] = [];
    const sizes: number[] = [];
    // A list page of about 3 KiB; the portfolio document is about 3 KiB, its page "about" under 1 KiB.
    const listPage = async (query: string) => {
      const bytes = await listPages.page(workspace.workspaceId, 'tasks', query, () => {
        builds.push(query);
        return { body: { query, filler: 'x'.repeat(3000), build: builds.length } };
      });
      sizes.push(cache.bytes);
      return bytes;
    };
    const portfolio = <T>(read: () => T): T => {
      const value = read();
      sizes.push(cache.bytes);
      return value;
    };

    await listPage('old');
    const document = await portfolio(() => reader.publishedDocumentBytes(tenantId));
    await portfolio(() => reader.publishedBySlugBytes(tenantId, 'page', 'about'));
    expect(cache.entries).toBe(3);
    // One more portfolio answer does not fit beside them: the list page, least recently used, goes.
    await portfolio(() => reader.publishedBySlugBytes(tenantId, 'outcome', 'first-outcome'));
    await portfolio(() => reader.encodedListPage(tenantId, 'post', { limit: 20, offset: 0 }, encodeListPage({ limit: 20, offset: 0 })));
    await listPage('old');
    expect(builds).toEqual(['old', 'old']);

    // And list pages push out the portfolio answers read longest ago: the document first.
    await listPage('new');
    expect(await portfolio(() => reader.publishedDocumentBytes(tenantId))).not.toBe(document);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(cap);

    // A change raises the revision the kept page was built at: it is built again, never served stale.
    const kept = await listPage('new');
    expect(builds).toEqual(['old', 'old', 'new']);
    await createTaskStore(t.db).createTask(workspace.workspaceId, { projectId: project.id, title: 'T' }, workspace.actor);
    expect(await listPage('new')).not.toBe(kept);
    expect(builds).toEqual(['old', 'old', 'new', 'new']);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(cap);
  });
});
