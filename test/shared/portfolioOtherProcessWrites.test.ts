// The server keeps encoded answers per portfolio revision; a write through another connection on
// the same data (as the admin CLI or another server makes from its own process) must show on the
// very next request on SQLite, and on PostgreSQL within the bound of what a server keeps in memory
// (src/store/cachedRows.ts: a second; in practice as soon as the database's NOTIFY arrives).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportPortfolio, importPortfolio } from '../../src/portfolio/import/importPortfolio.js';
import { issueApiKey } from '../../src/auth/apiKeys.js';
import { createApiKeyStore } from '../../src/store/apiKeys.js';
import { CACHED_ROW_MAX_AGE_MS } from '../../src/store/cachedRows.js';
import { bearer, startTestApp, type OtherInstance, type TestApp } from '../support/testApp.js';

let t: TestApp;
let otherProcess: OtherInstance;
beforeAll(async () => {
  t = await startTestApp();
  otherProcess = await t.openAnother();
});
afterAll(async () => {
  await otherProcess?.close();
  await t?.close();
});

/** Re-imports the tenant's own portfolio through the other connection, changed by `change`. */
async function reimport(change: (document: Record<string, any>) => void): Promise<void> {
  const document = (await exportPortfolio(otherProcess.store, t.fixture.portfolio.tenantId)) as unknown as Record<string, any>;
  change(document);
  await importPortfolio(otherProcess.store, t.fixture.portfolio.tenantId, document);
}

const get = (target: string) => t.client.get(target, bearer(t.fixture.portfolio.apiKey));

/** Until `check` holds: on SQLite it must at once; on PostgreSQL within the bound. */
async function shows(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = performance.now() + (t.engineKind === 'postgres' ? CACHED_ROW_MAX_AGE_MS : 0);
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`${what} did not show ${t.engineKind === 'postgres' ? `within ${CACHED_ROW_MAX_AGE_MS} ms` : 'on the next request'}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('answers after a write by another process', () => {
  it('serves the new document, list page and item on the next request', async () => {
    const before = await Promise.all([get('/api/v1/portfolio'), get('/api/v1/posts?limit=20'), get('/api/v1/pages/about')]);
    for (const response of before) expect(response.status).toBe(200);
    // The same requests again come from what the server keeps.
    const again = await get('/api/v1/portfolio');
    expect(again.body).toEqual(before[0]!.body);

    const firstPost = before[1]!.body.items[0].slug as string;
    await reimport((document) => {
      document.profile.name = 'Renamed elsewhere';
      document.posts.find((post: { slug: string }) => post.slug === firstPost).title = 'Retitled elsewhere';
      document.pages.find((page: { slug: string }) => page.slug === 'about').title = 'About, rewritten';
    });
    await shows(async () => (await get('/api/v1/portfolio')).body.profile.name === 'Renamed elsewhere', 'the new document');

    const portfolio = await get('/api/v1/portfolio');
    expect(portfolio.body.profile.name).toBe('Renamed elsewhere');
    const posts = await get('/api/v1/posts?limit=20');
    expect(posts.body.items[0]).toMatchObject({ slug: firstPost, title: 'Retitled elsewhere' });
    expect(posts.body.paging).toEqual(before[1]!.body.paging);
    expect((await get('/api/v1/pages/about')).body.title).toBe('About, rewritten');
    expect((await get(`/api/v1/posts/${firstPost}`)).body.title).toBe('Retitled elsewhere');
  });

  it('answers 404 on the next request after the portfolio is unpublished, and 200 again once republished', async () => {
    const targets = ['/api/v1/portfolio', '/api/v1/posts?limit=20', '/api/v1/pages/about'];
    for (const target of targets) expect((await get(target)).status, target).toBe(200);
    await reimport((document) => {
      document.published = false;
    });
    await shows(async () => (await get('/api/v1/portfolio')).status === 404, 'the unpublished portfolio');
    for (const target of targets) {
      const response = await get(target);
      expect(response.status, target).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
    await reimport((document) => {
      document.published = true;
    });
    await shows(async () => (await get('/api/v1/portfolio')).status === 200, 'the republished portfolio');
    for (const target of targets) expect((await get(target)).status, target).toBe(200);
  });

  it('answers 404 for an item unpublished elsewhere while the rest stays served', async () => {
    const posts = await get('/api/v1/posts?limit=20');
    const slug = posts.body.items[0].slug as string;
    expect((await get(`/api/v1/posts/${slug}`)).status).toBe(200);
    await reimport((document) => {
      document.posts.find((post: { slug: string }) => post.slug === slug).published = false;
    });
    await shows(async () => (await get(`/api/v1/posts/${slug}`)).status === 404, 'the unpublished post');
    expect((await get(`/api/v1/posts/${slug}`)).status).toBe(404);
    const after = await get('/api/v1/posts?limit=20');
    expect(after.body.paging.total).toBe(posts.body.paging.total - 1);
    expect(after.body.items.map((post: { slug: string }) => post.slug)).not.toContain(slug);
  });

  it('refuses a key revoked by another process on the next request', async () => {
    const keys = createApiKeyStore(otherProcess.store);
    const { id, key } = await issueApiKey(keys, { tenantId: t.fixture.portfolio.tenantId });
    expect((await t.client.get('/api/v1/portfolio', bearer(key))).status).toBe(200);
    await keys.revokeApiKey(id);
    await shows(async () => (await t.client.get('/api/v1/portfolio', bearer(key))).status === 403, 'the revocation');
    const refused = await t.client.get('/api/v1/portfolio', bearer(key));
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('api_key_revoked');
  });

  it('serves a change made by hand-run SQL too: triggers raise the revision, not only the importer', async () => {
    const before = await get('/api/v1/posts?limit=20');
    const post = before.body.items[0] as { slug: string; title: string };
    const keptItem = await get(`/api/v1/posts/${post.slug}`);
    expect(keptItem.status).toBe(200);
    await otherProcess.sql.run("UPDATE portfolio_items SET published = 0 WHERE tenant_id = ? AND kind = 'post' AND slug = ?", t.fixture.portfolio.tenantId, post.slug);
    await shows(async () => (await get(`/api/v1/posts/${post.slug}`)).status === 404, 'the unpublished post');
    expect((await get(`/api/v1/posts/${post.slug}`)).status).toBe(404);
    const listed = await get('/api/v1/posts?limit=20');
    expect(listed.body.items.map((item: { slug: string }) => item.slug)).not.toContain(post.slug);
    await otherProcess.sql.run("UPDATE portfolio_items SET published = 1 WHERE tenant_id = ? AND kind = 'post' AND slug = ?", t.fixture.portfolio.tenantId, post.slug);
    await shows(async () => (await get(`/api/v1/posts/${post.slug}`)).status === 200, 'the republished post');
    expect((await get(`/api/v1/posts/${post.slug}`)).status).toBe(200);
  });
});
