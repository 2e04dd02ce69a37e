import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createCursorCodec } from '../../src/paging/cursor.js';
import { createBoundedCache } from '../../src/store/boundedCache.js';
import { CACHED_ROW_MAX_AGE_MS, listenForCachedRowChanges } from '../../src/store/cachedRows.js';
import { engineOf } from '../../src/store/engine.js';
import { createListPageCache } from '../../src/store/listPageCache.js';
import { createCompanyStore } from '../../src/store/companies.js';
import { createContactStore } from '../../src/store/contacts.js';
import { createDealStore } from '../../src/store/deals.js';
import { createProjectStore } from '../../src/store/projects.js';
import { createTaskStore } from '../../src/store/tasks.js';
import { startTestApp, type OtherInstance, type TestApp } from '../support/testApp.js';
import { demoUsers, liftCallLimits } from '../support/workPlatform.js';
import { makeWorkspace } from '../store/workPlatformFactories.js';

/**
 * List pages are kept encoded and served again while their collection is unchanged. A write from
 * another connection or process shows on SQLite on the very next request, and on PostgreSQL
 * within the stated bound (about a second; in practice once its notice arrives). A write through
 * the serving process itself shows on the next request on both.
 */
let t: TestApp;
let other: OtherInstance;
let otherConnection: OtherInstance['store'];
const owner = { id: demoUsers.owner.id, kind: 'USER' as const };

beforeAll(async () => {
  t = await startTestApp();
  await liftCallLimits(t.store, t.fixture.workPlatform.workspaceId);
  // A second connection to the same data: what the admin CLI or another server process would use.
  other = await t.openAnother();
  otherConnection = other.store;
});
afterAll(async () => {
  await other?.close();
  await t?.close();
});

/** What a write through another connection must make true: at once on SQLite, within the bound on PostgreSQL. */
const shows = async (check: () => Promise<void>) =>
  t.engineKind === 'sqlite' ? check() : vi.waitFor(check, { timeout: 5_000, interval: 10 });

const list = async (resource: 'tasks' | 'projects', query = 'limit=100') => {
  const response = await t.workPlatformClient.get(`/v1/${resource}?${query}`, { authorization: `Bearer ${t.fixture.workPlatform.tokens.all}` });
  expect(response.status).toBe(200);
  return response.body as { items: { id: string; title?: string; name?: string }[]; nextCursor: string | null };
};

describe('kept list pages', () => {
  it('show tasks created, changed and deleted through another connection on the next request', async () => {
    const workspaceId = t.fixture.workPlatform.workspaceId;
    const before = await list('tasks');
    expect(await list('tasks')).toEqual(before);

    const tasks = createTaskStore(otherConnection);
    const created = await tasks.createTask(workspaceId, { projectId: t.fixture.workPlatform.projectId, title: 'Written elsewhere' }, owner);
    await shows(async () => {
      const afterCreate = await list('tasks');
      expect(afterCreate.items.map((item) => item.id)).toEqual([created.id, ...before.items.map((item) => item.id)].slice(0, 100));
    });

    await tasks.updateTask(workspaceId, created.id, { title: 'Renamed elsewhere' }, created.version, owner);
    await shows(async () => expect((await list('tasks')).items[0]).toMatchObject({ id: created.id, title: 'Renamed elsewhere' }));

    await tasks.deleteTask(workspaceId, created.id, null, owner);
    await shows(async () => expect(await list('tasks')).toEqual(before));
  });

  it('show a raw SQL change too: triggers, not the stores, raise the revision', async () => {
    const first = (await list('tasks', 'limit=1')).items[0]!;
    await other.sql.run('UPDATE tasks SET title = ? WHERE id = ?', 'Changed by hand', first.id);
    await shows(async () => expect((await list('tasks', 'limit=1')).items[0]).toMatchObject({ id: first.id, title: 'Changed by hand' }));
  });

  it('show projects created, renamed and deleted through another connection, each query kept apart', async () => {
    const workspaceId = t.fixture.workPlatform.workspaceId;
    const newestFirst = 'limit=100&sort=createdAt&order=desc';
    const oldestFirst = 'limit=1&sort=createdAt&order=asc';
    const before = await list('projects', newestFirst);
    const oldest = await list('projects', oldestFirst);
    expect(await list('projects', newestFirst)).toEqual(before);

    const projects = createProjectStore(otherConnection);
    const project = await projects.createProject(workspaceId, { name: 'Zeta elsewhere' }, owner);
    await shows(async () => expect((await list('projects', newestFirst)).items[0]).toMatchObject({ id: project.id, name: 'Zeta elsewhere' }));
    expect(await list('projects', oldestFirst)).toEqual(oldest);

    await projects.updateProject(workspaceId, project.id, { name: 'Zeta renamed' }, project.version, owner);
    await shows(async () => expect((await list('projects', newestFirst)).items[0]).toMatchObject({ id: project.id, name: 'Zeta renamed' }));

    await projects.deleteProject(workspaceId, project.id, null, owner);
    await shows(async () => expect(await list('projects', newestFirst)).toEqual(before));
  });
});

describe('collection revisions', () => {
  it('rise with every insert, update and delete of the workspace, and leave other workspaces alone', async () => {
    {
      const revision = async (workspaceId: string, collection: string) =>
        Number((await t.sql.value('SELECT sum(revision) FROM collection_revisions WHERE workspace_id = ? AND collection = ?', workspaceId, collection)) ?? 0);
      const workspace = await makeWorkspace(otherConnection);
      const other = await makeWorkspace(otherConnection);
      const project = await createProjectStore(otherConnection).createProject(workspace.workspaceId, { name: 'P' }, workspace.actor);
      // The first revision is random (a re-created workspace id must not repeat one), then +1 per write.
      // On PostgreSQL a write raises its connection's slot, and a pooled write may land on a connection
      // whose slot is new (a random start): the revision rises, not always by one.
      const expectRaisedOnce = async (collection: string, before: number) => {
        const after = await revision(workspace.workspaceId, collection);
        if (t.engineKind === 'sqlite') expect(after).toBe(before + 1);
        else expect(after).toBeGreaterThan(before);
        return after;
      };
      expect(await revision(workspace.workspaceId, 'projects')).toBeGreaterThanOrEqual(1);
      const tasks = createTaskStore(otherConnection);
      const task = await tasks.createTask(workspace.workspaceId, { projectId: project.id, title: 'T' }, workspace.actor);
      const first = await revision(workspace.workspaceId, 'tasks');
      await tasks.updateTask(workspace.workspaceId, task.id, { title: 'U' }, task.version, workspace.actor);
      const updated = await expectRaisedOnce('tasks', first);
      await tasks.deleteTask(workspace.workspaceId, task.id, null, workspace.actor);
      await expectRaisedOnce('tasks', updated);
      expect(await revision(other.workspaceId, 'tasks')).toBe(0);
    }
  });

  it('do not stand in the way of deleting a workspace with its tasks', async () => {
    const workspace = await makeWorkspace(otherConnection);
    const project = await createProjectStore(otherConnection).createProject(workspace.workspaceId, { name: 'P' }, workspace.actor);
    await createTaskStore(otherConnection).createTask(workspace.workspaceId, { projectId: project.id, title: 'T' }, workspace.actor);
    await other.sql.run('DELETE FROM workspaces WHERE id = ?', workspace.workspaceId);
    expect(await other.sql.value('SELECT count(*) FROM collection_revisions WHERE workspace_id = ?', workspace.workspaceId)).toBe(0);
    expect(await other.sql.value('SELECT count(*) FROM tasks WHERE workspace_id = ?', workspace.workspaceId)).toBe(0);
  });
});

describe('kept list pages of every versioned resource', () => {
  const listOf = async (resource: string, query = 'limit=100') => {
    const response = await t.workPlatformClient.get(`/v1/${resource}?${query}`, { authorization: `Bearer ${t.fixture.workPlatform.tokens.all}` });
    expect(response.status).toBe(200);
    return response.body as { items: ({ id: string } & Record<string, unknown>)[]; nextCursor: string | null };
  };

  it('show companies, contacts and deals written through another connection, and a filtered page too, on the next request', async () => {
    const workspaceId = t.fixture.workPlatform.workspaceId;
    const stores = {
      companies: createCompanyStore(otherConnection),
      contacts: createContactStore(otherConnection),
      deals: createDealStore(otherConnection),
    };
    const dealsBefore = await listOf('deals');
    expect(await listOf('deals')).toEqual(dealsBefore);
    const company = await stores.companies.createCompany(workspaceId, { name: 'Kept Co' }, owner);
    const contactsOfCompany = `limit=100&companyId=${company.id}`;
    expect((await listOf('contacts', contactsOfCompany)).items).toEqual([]);
    const contact = await stores.contacts.createContact(workspaceId, { name: 'Kept Contact', companyId: company.id }, owner);
    await shows(async () => expect((await listOf('contacts', contactsOfCompany)).items.map((item) => item.id)).toEqual([contact.id]));

    const deal = await stores.deals.createDeal(workspaceId, { title: 'Kept deal', amountMinor: 100, currency: 'EUR', ownerId: owner.id, companyId: company.id }, owner);
    await shows(async () => expect((await listOf('deals')).items.map((item) => item.id)).toContain(deal.id));
    const byStage = 'limit=100&stage=won';
    expect((await listOf('deals', byStage)).items.map((item) => item.id)).not.toContain(deal.id);
    await stores.deals.updateDeal(workspaceId, deal.id, { stage: 'won' }, deal.version, owner);
    await shows(async () => expect((await listOf('deals', byStage)).items.map((item) => item.id)).toContain(deal.id));
    await stores.deals.deleteDeal(workspaceId, deal.id, null, owner);
    await shows(async () => expect(await listOf('deals')).toEqual(dealsBefore));

    // Deleting the company detaches its contact: the contacts' page shows it at once.
    await stores.companies.deleteCompany(workspaceId, company.id, null, owner);
    await shows(async () => expect((await listOf('contacts', contactsOfCompany)).items).toEqual([]));
    await shows(async () => expect((await listOf('companies')).items.map((item) => item.id)).not.toContain(company.id));
  });

  it('show a raw SQL change of a contract or a connector too', async () => {
    const contract = (await listOf('contracts', 'limit=1&sort=createdAt&order=asc')).items[0]!;
    await other.sql.run('UPDATE contracts SET title = ? WHERE id = ?', 'Retitled by hand', contract.id);
    await shows(async () => expect((await listOf('contracts', 'limit=1&sort=createdAt&order=asc')).items[0]).toMatchObject({ id: contract.id, title: 'Retitled by hand' }));
    const connector = (await listOf('connectors', 'limit=1&sort=createdAt&order=asc')).items[0]!;
    await other.sql.run('UPDATE connectors SET name = ? WHERE id = ?', 'Renamed by hand', connector.id);
    await shows(async () => expect((await listOf('connectors', 'limit=1&sort=createdAt&order=asc')).items[0]).toMatchObject({ id: connector.id, name: 'Renamed by hand' }));
  });
});

describe('createListPageCache bounds', () => {
  const answerCache = () => createBoundedCache({ maxBytes: 1024 * 1024 });

  it('keeps at most maxPages pages, dropping the least recently used', async () => {
    const cache = createListPageCache(otherConnection, { cache: answerCache(), maxPages: 2 });
    const workspaceId = (await makeWorkspace(otherConnection)).workspaceId;
    const builds: string[] = [];
    const page = (query: string, body: unknown = { query }) =>
      cache.page(workspaceId, 'tasks', query, () => {
        builds.push(query);
        return { body };
      });
    await page('a');
    await page('b');
    await page('a');
    await page('c'); // drops b, the least recently used
    await page('a');
    await page('b');
    expect(builds).toEqual(['a', 'b', 'c', 'b']);
  });

  it('builds again once the collection changed, and refuses as build refuses', async () => {
    const cache = createListPageCache(otherConnection, { cache: answerCache() });
    const workspace = await makeWorkspace(otherConnection);
    let builds = 0;
    const page = () => cache.page(workspace.workspaceId, 'projects', 'q', () => ({ body: { builds: ++builds } }));
    await page();
    await page();
    await createProjectStore(otherConnection).createProject(workspace.workspaceId, { name: 'P' }, workspace.actor);
    expect(JSON.parse((await page()).toString())).toEqual({ builds: 2 });
    await expect(cache.page(workspace.workspaceId, 'projects', 'bad', () => { throw new Error('refused'); })).rejects.toThrow('refused');
  });
  it('reads the revision again once a change is announced (its own writes at their commit), or one made by hand once the bound has passed', async () => {
    const changes = await listenForCachedRowChanges(engineOf(otherConnection));
    try {
      let clock = Date.now();
      const cache = createListPageCache(otherConnection, { cache: answerCache(), changes, now: () => clock });
      const workspace = await makeWorkspace(otherConnection);
      let builds = 0;
      const page = async () => JSON.parse((await cache.page(workspace.workspaceId, 'projects', 'q', () => ({ body: (builds += 1) }))).toString()) as number;
      expect(await page()).toBe(1);
      expect(await page()).toBe(1);
      const heard = changes.generation(['collection_revisions']);
      const project = await createProjectStore(otherConnection).createProject(workspace.workspaceId, { name: 'P' }, workspace.actor);
      // No waiting: the writing engine tells its own listeners before the write resolves.
      expect(await page()).toBe(2);
      if (t.engineKind === 'postgres') {
        // Its NOTIFY comes back too (one more reading of the same revision); wait for it, so that it cannot stand for what follows.
        await vi.waitFor(() => expect(changes.generation(['collection_revisions'])).toBe(heard + 2), { timeout: 5_000, interval: 10 });
        expect(await page()).toBe(2);
        // SQL by hand announces nothing: the revision read is kept until the bound has passed, then read again.
        await other.sql.run('UPDATE projects SET name = ? WHERE id = ?', 'Renamed by hand', project.id);
        expect(await page()).toBe(2);
        clock += CACHED_ROW_MAX_AGE_MS - 1;
        expect(await page()).toBe(2);
        clock += 1;
        expect(await page()).toBe(3);
      }
    } finally {
      await changes.stop();
    }
  });

  it('never keeps a page under a revision newer than its rows: a write while the page is built shows on the next request', async () => {
    const cache = createListPageCache(t.store, { cache: answerCache() });
    const workspace = await makeWorkspace(otherConnection);
    const projects = createProjectStore(t.store);
    const names = async () => (await projects.listProjects(workspace.workspaceId, { sort: 'createdAt', order: 'asc', limit: 100 })).items.map((project) => project.name);
    const page = async (during?: () => Promise<unknown>) =>
      JSON.parse(
        (await cache.page(workspace.workspaceId, 'projects', 'q', async () => {
          const read = await names();
          // Another process commits after this page's rows were read.
          await during?.();
          return { body: read };
        })).toString(),
      ) as string[];
    expect(await page(() => createProjectStore(otherConnection).createProject(workspace.workspaceId, { name: 'late' }, workspace.actor))).toEqual([]);
    // Another process's commit shows from the next turn of the event loop (SQLite reads PRAGMA data_version once a turn).
    await new Promise((resolve) => setImmediate(resolve));
    expect(await page()).toEqual(['late']);
  });
});

describe('LIST_PAGE_CACHE_PAGES=0', () => {
  it('are kept per cursor key: after a rotation the next page is built again, its cursor signed with the new key', async () => {
    // Untouched since: every request serves the kept page.
    const kept = await list('projects', 'limit=1');
    expect(kept.nextCursor).not.toBeNull();
    const cursorFile = path.join(t.dataDir, 'cursor.key');
    const newKey = randomBytes(32);
    // As `admin keys rotate` writes it: a new line, written whole and moved into place.
    writeFileSync(`${cursorFile}.new`, `${readFileSync(cursorFile, 'utf8').trim()}\nk9 ${newKey.toString('base64url')} ${new Date().toISOString()}\n`);
    renameSync(`${cursorFile}.new`, cursorFile);
    const binding = { resource: 'projects', workspaceId: t.fixture.workPlatform.workspaceId, sort: 'createdAt', order: 'desc' } as const;
    // The server looks at the file at most a second after it changed; no project was written meanwhile.
    await vi.waitFor(
      async () => {
        const { nextCursor } = await list('projects', 'limit=1');
        expect(() => createCursorCodec(newKey).decode(nextCursor!, binding)).not.toThrow();
      },
      { timeout: 5_000, interval: 50 },
    );
    // The old key still verifies within its grace period: the cursor handed out before goes on.
    expect((await list('projects', `limit=1&cursor=${encodeURIComponent(kept.nextCursor!)}`)).items).toHaveLength(1);
  });

  it('keeps no page: every request builds its page', async () => {
    const cache = createListPageCache(otherConnection, { cache: createBoundedCache({ maxBytes: 1024 * 1024 }), maxPages: 0 });
    const workspaceId = (await makeWorkspace(otherConnection)).workspaceId;
    let builds = 0;
    await cache.page(workspaceId, 'tasks', 'q', () => ({ body: ++builds }));
    await cache.page(workspaceId, 'tasks', 'q', () => ({ body: ++builds }));
    expect(builds).toBe(2);
  });
});
