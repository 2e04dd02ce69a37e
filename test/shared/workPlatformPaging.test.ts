import { describe, expect, it } from 'vitest';
import { createCompanyStore } from '../../src/store/companies.js';
import { createContactStore } from '../../src/store/contacts.js';
import { createDealStore } from '../../src/store/deals.js';
import { createProjectStore } from '../../src/store/projects.js';
import { createTaskStore } from '../../src/store/tasks.js';
import { loadContractDocument, type ContractClient } from '../support/contractClient.js';
import { contractOperations } from '../support/operations.js';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { demoUsers, expectProblem, jsonHeaders, makeTestWorkspace } from '../support/workPlatform.js';

/**
 * Keyset paging: every sort × order of every list walks each row of the workspace exactly once,
 * in the documented order (sort field, then id, nulls of dueOn last ascending and first
 * descending, priority LOW < MEDIUM < HIGH), across ties, with cursors that refuse misuse.
 */
type Item = Record<string, any> & { id: string };

/** The sort enum of each list, read from the contract so a new sort field is walked too. */
function sortsOf(operationId: string): string[] {
  const operation = contractOperations('work-platform').find((candidate) => candidate.operationId === operationId)!;
  const document = loadContractDocument('work-platform') as { paths: Record<string, any>; components: { parameters: Record<string, any> } };
  // The sort parameter is a component, referenced by each list operation.
  const reference = document.paths[operation.template].get.parameters.find((parameter: any) => /\/[A-Za-z]+Sort$/.test(parameter.$ref ?? ''));
  const sort = document.components.parameters[reference.$ref.split('/').at(-1)];
  return sort.schema.enum;
}

/**
 * Every sortable list of the contract (`GET /v1/<resource>` with a `…Sort` parameter), and the
 * operation that creates its rows (`POST` on the same path), read from the contract so a new
 * resource is walked with no edit here.
 */
const lists = contractOperations('work-platform')
  .filter((operation) => operation.method === 'GET' && operation.isList && /^\/v1\/[a-z-]+$/.test(operation.template) && hasSortParameter(operation.operationId))
  .map((operation) => ({
    resource: operation.template.slice('/v1/'.length),
    sorts: sortsOf(operation.operationId),
    pageSize: operation.template === '/v1/tasks' ? 7 : 3,
    create: contractOperations('work-platform').find((candidate) => candidate.method === 'POST' && candidate.template === operation.template),
  }));

function hasSortParameter(operationId: string): boolean {
  const operation = contractOperations('work-platform').find((candidate) => candidate.operationId === operationId)!;
  const document = loadContractDocument('work-platform') as { paths: Record<string, any> };
  return document.paths[operation.template].get.parameters.some((parameter: any) => /\/[A-Za-z]+Sort$/.test(parameter.$ref ?? ''));
}

const PRIORITY_RANK: Record<string, number> = { LOW: 1, MEDIUM: 2, HIGH: 3 };

/** The documented sort key: nulls (only dueOn has them) above every value. */
function sortKey(item: Item, sort: string): number | string {
  switch (sort) {
    case 'createdAt':
    case 'updatedAt':
      return Date.parse(item[sort]);
    case 'dueOn':
      return item.dueOn === null ? Number.POSITIVE_INFINITY : Date.parse(item.dueOn);
    case 'priority':
      return PRIORITY_RANK[item.priority]!;
    default:
      return item[sort];
  }
}

function documentedOrder(items: Item[], sort: string, order: 'asc' | 'desc'): Item[] {
  const direction = order === 'asc' ? 1 : -1;
  const compare = (a: number | string, b: number | string) => (a < b ? -1 : a > b ? 1 : 0);
  return [...items].sort((a, b) => direction * (compare(sortKey(a, sort), sortKey(b, sort)) || compare(a.id, b.id)));
}

let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
const auth = (token: string) => ({ authorization: `Bearer ${token}` });

/** The server's clock: held at one instant while the rows are seeded (ties on createdAt and updatedAt), then the real time. */
let heldAt: number | undefined;
useTestApp(async ({ workPlatform: app }) => {
  ({ t, client, fx } = app);
  // Projects created at one instant with repeating names: ties on every project sort.
  const instant = Date.now() - 3_600_000;
  // Every list's create operation, four times with its example body at one instant: ties on every sort of every list.
  heldAt = instant;
  for (const { create } of lists) {
    for (let copy = 0; copy < 4 && create; copy += 1) {
      const response = await client.request('POST', create.examplePath, { headers: jsonHeaders(fx.tokens.all), body: JSON.stringify(create.requestBodyExample ?? {}) });
      expect(response.status, `${create.operationId}: ${response.text.slice(0, 300)}`).toBe(201);
    }
  }
  heldAt = undefined;
  const projects = createProjectStore(t.store, { now: () => instant });
  const owner = { id: demoUsers.owner.id, kind: 'USER' as const };
  for (const name of ['Alpha', 'Beta', 'Alpha', 'Gamma', 'Beta', 'Alpha', 'Delta', 'Alpha', 'Beta', 'Gamma']) {
    await projects.createProject(fx.workspaceId, { name }, owner);
  }
  // CRM records at one instant with repeating names, titles and amounts: ties on every CRM sort.
  const companies = createCompanyStore(t.store, { now: () => instant });
  const contacts = createContactStore(t.store, { now: () => instant });
  const deals = createDealStore(t.store, { now: () => instant });
  for (const name of ['Alpha', 'Beta', 'Alpha', 'Gamma', 'Beta', 'Alpha']) {
    await companies.createCompany(fx.workspaceId, { name }, owner);
    await contacts.createContact(fx.workspaceId, { name }, owner);
    await deals.createDeal(fx.workspaceId, { title: name, amountMinor: name.length * 100, currency: 'EUR', ownerId: owner.id }, owner);
  }
  // A few tasks in the other workspace, so that it has cursors of its own.
  const otherOwner = { id: demoUsers.otherOwner.id, kind: 'USER' as const };
  const tasks = createTaskStore(t.store);
  for (const title of ['One', 'Two', 'Three']) await tasks.createTask(fx.otherWorkspace.workspaceId, { projectId: fx.otherWorkspace.projectId, title }, otherOwner);
}, { liftCallLimits: true, now: () => heldAt ?? Date.now() });

function listPath(resource: string, query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  return `/v1/${resource}?${params}`;
}

/** Follows nextCursor from the first page to the last; returns the items and the pages. */
async function walk(resource: string, sort: string, order: string, limit: number, token = fx.tokens.all): Promise<{ items: Item[]; pages: Item[][] }> {
  const pages: Item[][] = [];
  let cursor: string | undefined;
  do {
    const response = await client.get(listPath(resource, { sort, order, limit, cursor }), auth(token));
    expect(response.status, response.text).toBe(200);
    const { items, nextCursor } = response.body as { items: Item[]; nextCursor: string | null };
    // Only the last page may be short, and only the last page has no cursor.
    if (nextCursor !== null) expect(items).toHaveLength(limit);
    else expect(items.length).toBeLessThanOrEqual(limit);
    pages.push(items);
    cursor = nextCursor ?? undefined;
    expect(pages.length).toBeLessThan(200);
  } while (cursor !== undefined);
  return { items: pages.flat(), pages };
}

const idsInDatabase = async (resource: string, workspaceId: string) =>
  (await t.sql.rows<{ id: string }>(`SELECT id FROM ${resource} WHERE workspace_id = ? ORDER BY id`, workspaceId)).map((row) => row.id);

describe.each(lists)('GET /v1/$resource', ({ resource, sorts, pageSize }) => {
  const cases = sorts.flatMap((sort) => (['asc', 'desc'] as const).map((order) => ({ sort, order })));

  it.each(cases)('walks every row exactly once in the documented order: sort=$sort order=$order', async ({ sort, order }) => {
    const { items, pages } = await walk(resource, sort, order, pageSize);
    const ids = items.map((item) => item.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(await idsInDatabase(resource, fx.workspaceId));
    expect(pages.length).toBe(Math.ceil(ids.length / pageSize));
    expect(ids).toEqual(documentedOrder(items, sort, order).map((item) => item.id));

    // The walk crosses ties of the sort key, so the id tie-breaker is exercised.
    const keys = items.map((item) => sortKey(item, sort));
    expect(keys.some((key, index) => index > 0 && key === keys[index - 1]), `no ties on ${sort}`).toBe(true);
    if (sort === 'dueOn') {
      const nulls = items.map((item) => item.dueOn === null);
      expect(nulls.some(Boolean)).toBe(true);
      // Nulls come last ascending and first descending.
      const firstNull = nulls.indexOf(true);
      expect(nulls.slice(order === 'asc' ? firstNull : 0, order === 'asc' ? undefined : nulls.lastIndexOf(true) + 1).every(Boolean)).toBe(true);
      expect(order === 'asc' ? nulls.at(-1) : nulls[0]).toBe(true);
    }
  });

  it('serves the default (sort createdAt, order desc, limit 50) as the first page of that walk', async () => {
    const first = await client.get(`/v1/${resource}`, auth(fx.tokens.all));
    const { items } = await walk(resource, 'createdAt', 'desc', 100);
    expect(first.body.items.map((item: Item) => item.id)).toEqual(items.slice(0, 50).map((item) => item.id));
    expect(first.body.nextCursor === null).toBe(items.length <= 50);
  });

  it('splits a page inside a run of equal keys and still misses nothing', async () => {
    const sort = resource === 'tasks' ? 'priority' : sorts.includes('name') ? 'name' : 'title';
    const { pages } = await walk(resource, sort, 'asc', pageSize);
    const splits = pages.slice(1).filter((page, index) => sortKey(page[0]!, sort) === sortKey(pages[index]!.at(-1)!, sort));
    expect(splits.length).toBeGreaterThan(0);
  });
});

describe('paging while rows are added', () => {
  it('shows every existing row exactly once, and a row added behind the position later', async () => {
    const before = await idsInDatabase('tasks', fx.workspaceId);
    const seen: string[] = [];
    let cursor: string | undefined;
    let added: string | undefined;
    do {
      const response = await client.get(listPath('tasks', { sort: 'createdAt', order: 'asc', limit: 25, cursor }), auth(fx.tokens.all));
      seen.push(...response.body.items.map((item: Item) => item.id));
      cursor = response.body.nextCursor ?? undefined;
      if (!added) {
        const created = await client.request('POST', '/v1/tasks', {
          headers: { ...auth(fx.tokens.all), 'content-type': 'application/json' },
          body: JSON.stringify({ projectId: fx.projectId, title: 'Added while paging' }),
        });
        added = created.body.id as string;
      }
    } while (cursor !== undefined);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((id) => id !== added).sort()).toEqual(before);
    expect(seen.at(-1)).toBe(added);
  });
});

describe('cursors that do not fit', () => {
  async function cursorOf(resource: string, query: Record<string, string | number>, token = fx.tokens.all): Promise<string> {
    const response = await client.get(listPath(resource, { limit: 2, ...query }), auth(token));
    expect(response.body.nextCursor).toEqual(expect.any(String));
    return response.body.nextCursor as string;
  }

  const list = (resource: string, query: Record<string, string | number | undefined>) => client.get(listPath(resource, query), auth(fx.tokens.all));

  function expectCursorProblem(response: Awaited<ReturnType<typeof list>>, code: 'cursor-mismatch' | 'invalid-cursor') {
    const problem = expectProblem(response, 422, 'validation', code);
    expect(problem.errors).toEqual([{ path: '?cursor', code: 'invalid_cursor', message: expect.any(String) }]);
  }

  it.each([
    ['another sort', { sort: 'title', order: 'desc' }],
    ['another order', { sort: 'createdAt', order: 'asc' }],
    ['another sort and order', { sort: 'dueOn', order: 'asc' }],
  ])('answers 422 cursor-mismatch to a task cursor used with %s', async (_case, query) => {
    const cursor = await cursorOf('tasks', { sort: 'createdAt', order: 'desc' });
    expect((await list('tasks', { sort: 'createdAt', order: 'desc', cursor })).status).toBe(200);
    expectCursorProblem(await list('tasks', { ...query, cursor }), 'cursor-mismatch');
  });

  it('answers 422 cursor-mismatch when the sort and order are left out but the cursor was for others', async () => {
    const cursor = await cursorOf('tasks', { sort: 'title', order: 'asc' });
    expectCursorProblem(await list('tasks', { cursor }), 'cursor-mismatch');
  });

  it('answers 422 cursor-mismatch for a cursor of the other list', async () => {
    const taskCursor = await cursorOf('tasks', { sort: 'createdAt', order: 'desc' });
    expectCursorProblem(await list('projects', { sort: 'createdAt', order: 'desc', cursor: taskCursor }), 'cursor-mismatch');
    const projectCursor = await cursorOf('projects', { sort: 'createdAt', order: 'desc' });
    expectCursorProblem(await list('tasks', { sort: 'createdAt', order: 'desc', cursor: projectCursor }), 'cursor-mismatch');
  });

  it("answers 422 cursor-mismatch for another workspace's cursor, and never shows its rows", async () => {
    const theirs = await cursorOf('tasks', { sort: 'createdAt', order: 'desc', limit: 1 }, fx.otherWorkspace.token);
    const response = await list('tasks', { sort: 'createdAt', order: 'desc', cursor: theirs });
    expectCursorProblem(response, 'cursor-mismatch');
    expect(response.text).not.toContain(fx.otherWorkspace.taskId);
  });

  it.each([
    ['a garbage cursor', () => 'abc'],
    ['two garbage parts', () => 'abc.def'],
    ['a truncated cursor', (cursor: string) => cursor.slice(0, -4)],
    ['a cursor with its payload altered', (cursor: string) => alterPayload(cursor)],
    ['a cursor with one character of its signature changed', (cursor: string) => flipLast(cursor)],
    ['a cursor with its signature left out', (cursor: string) => cursor.split('.')[0]!],
    ['a cursor with an extra part', (cursor: string) => `${cursor}.x`],
    ['a cursor in padded base64', (cursor: string) => cursor.split('.').map((part) => Buffer.from(part, 'base64url').toString('base64')).join('.')],
  ])('answers 422 invalid-cursor to %s', async (_case, tamper) => {
    const cursor = await cursorOf('tasks', { sort: 'createdAt', order: 'desc' });
    const altered = tamper(cursor);
    expect(altered).not.toBe(cursor);
    expectCursorProblem(await list('tasks', { sort: 'createdAt', order: 'desc', cursor: altered }), 'invalid-cursor');
  });

  it("answers 422 for an empty cursor and for one longer than the contract's maxLength", async () => {
    const empty = expectProblem(await list('tasks', { cursor: '' }), 422, 'validation');
    expect(empty.errors.map((issue: { path: string }) => issue.path)).toEqual(['?cursor']);
    const { maxLength } = (loadContractDocument('work-platform') as any).components.parameters.Cursor.schema as { maxLength: number };
    const long = expectProblem(await list('tasks', { cursor: 'a'.repeat(maxLength + 1) }), 422, 'validation');
    expect(long.errors).toEqual([{ path: '?cursor', code: 'too_big', message: expect.any(String) }]);
  });
});

/** Rewrites the id in the signed payload (still valid base64url JSON), keeping the old MAC. */
function alterPayload(cursor: string): string {
  const [payload, mac] = cursor.split('.') as [string, string];
  const json = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  json.i = fx.taskIds[0] === json.i ? fx.taskIds[1] : fx.taskIds[0];
  return `${Buffer.from(JSON.stringify(json)).toString('base64url')}.${mac}`;
}

function flipLast(cursor: string): string {
  // The second-to-last character carries whole bits of the MAC (the last may carry padding bits).
  const index = cursor.length - 2;
  return `${cursor.slice(0, index)}${cursor[index] === 'A' ? 'B' : 'A'}${cursor.slice(index + 1)}`;
}

describe('limit', () => {
  it.each([['0', 'too_small'], ['101', 'too_big'], ['abc', 'invalid_type'], ['1.5', 'invalid_type'], ['-1', 'too_small'], ['1e1', 'invalid_type'], ['', 'invalid_type']])(
    'answers 422 to limit=%s with the ?limit path',
    async (limit, code) => {
      for (const resource of ['tasks', 'projects']) {
        const problem = expectProblem(await client.get(`/v1/${resource}?limit=${limit}`, auth(fx.tokens.all)), 422, 'validation');
        expect(problem.errors).toEqual([{ path: '?limit', code, message: expect.any(String) }]);
      }
    },
  );

  it('answers 422 to a limit given twice', async () => {
    const problem = expectProblem(await client.get('/v1/tasks?limit=5&limit=6', auth(fx.tokens.all)), 422, 'validation');
    expect(problem.errors.map((issue: { path: string }) => issue.path)).toEqual(['?limit']);
  });

  it('takes 1 and 100', async () => {
    expect((await client.get('/v1/tasks?limit=1', auth(fx.tokens.all))).body.items).toHaveLength(1);
    expect((await client.get('/v1/tasks?limit=100', auth(fx.tokens.all))).body.items).toHaveLength(100);
  });

  it('answers 422 to an unknown sort or order, naming each', async () => {
    const problem = expectProblem(await client.get('/v1/tasks?sort=assigneeId&order=up', auth(fx.tokens.all)), 422, 'validation');
    expect(problem.errors.map((issue: { path: string; code: string }) => [issue.path, issue.code])).toEqual([
      ['?sort', 'invalid_enum_value'],
      ['?order', 'invalid_enum_value'],
    ]);
  });
});

describe('sort keys as long as the contract allows', () => {
  // A cursor carries the last row's sort key: a 200-character title of four-byte characters must fit.
  it('pages past a task whose 200-character title is made of emoji', async () => {
    const workspace = await makeTestWorkspace(t.store, t.sessionSecret);
    for (const title of ['😀'.repeat(200), 'plain']) {
      const created = await client.request('POST', '/v1/tasks', { headers: jsonHeaders(workspace.pat), body: JSON.stringify({ projectId: workspace.projectId, title }) });
      expect(created.status).toBe(201);
    }
    const first = await client.get('/v1/tasks?sort=title&order=desc&limit=1', auth(workspace.pat));
    expect(first.status).toBe(200);
    const second = await client.get(listPath('tasks', { sort: 'title', order: 'desc', limit: 1, cursor: first.body.nextCursor }), auth(workspace.pat));
    expect(second.body.items.map((item: Item) => item.title)).toEqual(['plain']);
  });
});
