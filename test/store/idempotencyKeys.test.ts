import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';
import { sqliteWriteTransactions } from '../../src/store/writeTransactions.js';
import { StoreError } from '../../src/store/errors.js';
import {
  createIdempotencyKeyStore,
  idempotencyKeyPattern,
  idempotencyWindowMs,
  type IdempotencyKeyStore,
} from '../../src/store/idempotencyKeys.js';
import { createProjectStore } from '../../src/store/projects.js';
import { createTaskStore } from '../../src/store/tasks.js';
import { makeDatabase, type TempDatabase } from './factories.js';
import { runScriptProcess, sourceUrl } from '../support/serverProcess.js';
import { makeWorkspace, type WorkspaceFixture } from './workPlatformFactories.js';

let t: TempDatabase;
let workspace: WorkspaceFixture;
let store: IdempotencyKeyStore;
const now = Date.UTC(2026, 10, 23, 9, 41, 0);
beforeEach(async () => {
  t = makeDatabase();
  workspace = await makeWorkspace(t.db);
  store = createIdempotencyKeyStore(t.db);
});
afterEach(() => t.cleanup());

const answer = (overrides: Partial<Parameters<IdempotencyKeyStore['saveIdempotencyRecord']>[0]> = {}) => ({
  workspaceId: workspace.workspaceId,
  key: 'order-7f3a',
  method: 'POST',
  path: '/v1/tasks',
  status: 201,
  headers: { location: '/v1/tasks/tsk_abc', etag: '"1"' },
  body: '{"id":"tsk_abc"}',
  now,
  ...overrides,
});
const count = (table: string) => t.db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;

describe('idempotency key store', () => {
  it('stores a 2xx answer and finds it for 24 hours in the same workspace only', async () => {
    const saved = await store.saveIdempotencyRecord(answer());
    expect(saved).toEqual({ ...answer(), now: undefined, createdAt: now, expiresAt: now + idempotencyWindowMs });
    expect(idempotencyWindowMs).toBe(86_400_000);
    const { now: _now, ...expected } = answer();
    expect(await store.findIdempotencyRecord(workspace.workspaceId, 'order-7f3a', now + idempotencyWindowMs - 1)).toEqual({
      ...expected,
      createdAt: now,
      expiresAt: now + idempotencyWindowMs,
    });
    expect(await store.findIdempotencyRecord(workspace.workspaceId, 'order-7f3a', now + idempotencyWindowMs)).toBeUndefined();
    expect(await store.findIdempotencyRecord((await makeWorkspace(t.db, { name: 'Other' })).workspaceId, 'order-7f3a', now)).toBeUndefined();
    expect(await store.findIdempotencyRecord(workspace.workspaceId, 'ORDER-7F3A', now)).toBeUndefined();
  });

  it('stores only 2xx answers and well-formed keys', async () => {
    for (const status of [199, 300, 409, 500]) await expect(store.saveIdempotencyRecord(answer({ status }))).rejects.toThrow(/Only 2xx/);
    for (const key of ['', 'x'.repeat(256), 'tab\tkey', 'naïve']) await expect(store.saveIdempotencyRecord(answer({ key }))).rejects.toThrow(StoreError);
    expect(idempotencyKeyPattern.test('a'.repeat(255))).toBe(true);
    expect(idempotencyKeyPattern.test('with space ~!')).toBe(true);
    expect(count('idempotency_keys')).toBe(0);
  });

  it('refuses to overwrite a live record but replaces an expired one', async () => {
    await store.saveIdempotencyRecord(answer());
    await expect(store.saveIdempotencyRecord(answer({ body: '{"id":"tsk_other"}', now: now + 1000 }))).rejects.toThrow(/already has a stored answer/);
    const later = now + idempotencyWindowMs;
    await store.saveIdempotencyRecord(answer({ body: '{"id":"tsk_new"}', now: later }));
    expect((await store.findIdempotencyRecord(workspace.workspaceId, 'order-7f3a', later))?.body).toBe('{"id":"tsk_new"}');
    expect(count('idempotency_keys')).toBe(1);
  });

  it('purges expired records only and says how many', async () => {
    await store.saveIdempotencyRecord(answer({ key: 'old-1' }));
    await store.saveIdempotencyRecord(answer({ key: 'old-2', now: now + 10 }));
    await store.saveIdempotencyRecord(answer({ key: 'fresh', now: now + 60_000 }));
    expect(await store.purgeExpiredIdempotencyKeys(now + idempotencyWindowMs + 10)).toBe(2);
    expect(await store.purgeExpiredIdempotencyKeys(now + idempotencyWindowMs + 10)).toBe(0);
    expect(t.db.prepare('SELECT key FROM idempotency_keys').pluck().all()).toEqual(['fresh']);
  });
});

describe('one write transaction for the record, the resource and its outbox row', () => {
  it('commits the record, the resource and its outbox row together, or none of them', async () => {
    const projectId = (await createProjectStore(t.db).createProject(workspace.workspaceId, { name: 'P' }, workspace.actor)).id;
    const tasks = createTaskStore(t.db);
    const before = { tasks: count('tasks'), events: count('events') };
    await expect(
      sqliteWriteTransactions(t.db).write(async () => {
        const task = await tasks.createTask(workspace.workspaceId, { projectId, title: 'Lost' }, workspace.actor);
        await store.saveIdempotencyRecord(answer({ body: JSON.stringify(task) }));
        throw new Error('the response could not be built');
      }),
    ).rejects.toThrow(/could not be built/);
    expect({ tasks: count('tasks'), events: count('events'), keys: count('idempotency_keys') }).toEqual({ ...before, keys: 0 });

    const task = await sqliteWriteTransactions(t.db).write(async () => {
      const created = await tasks.createTask(workspace.workspaceId, { projectId, title: 'Kept' }, workspace.actor);
      await store.saveIdempotencyRecord(answer({ body: JSON.stringify(created) }));
      return created;
    });
    expect(JSON.parse((await store.findIdempotencyRecord(workspace.workspaceId, 'order-7f3a', now))!.body)).toEqual(task);
    expect({ tasks: count('tasks'), events: count('events') }).toEqual({ tasks: before.tasks + 1, events: before.events + 1 });
  });

  it('serializes the same key across processes: exactly one acts, the others replay its answer', async () => {
    const projectId = (await createProjectStore(t.db).createProject(workspace.workspaceId, { name: 'P' }, workspace.actor)).id;
    t.db.close();
    const script = `
const { openDatabase } = await import(${sourceUrl('src/store/database.ts')});
const { sqliteWriteTransactions } = await import(${sourceUrl('src/store/writeTransactions.ts')});
const { createIdempotencyKeyStore } = await import(${sourceUrl('src/store/idempotencyKeys.ts')});
const { createTaskStore } = await import(${sourceUrl('src/store/tasks.ts')});
const db = openDatabase(${JSON.stringify(t.path)});
const keys = createIdempotencyKeyStore(db);
const tasks = createTaskStore(db);
const workspaceId = ${JSON.stringify(workspace.workspaceId)};
const result = await sqliteWriteTransactions(db).write(async () => {
  const found = await keys.findIdempotencyRecord(workspaceId, 'same-key', Date.now());
  if (found) return { replayed: true, body: found.body };
  const task = await tasks.createTask(workspaceId, { projectId: ${JSON.stringify(projectId)}, title: 'Once' }, ${JSON.stringify(workspace.actor)});
  const until = Date.now() + 150; while (Date.now() < until) {} // hold the lock so that the others queue
  const body = JSON.stringify(task);
  await keys.saveIdempotencyRecord({ workspaceId, key: 'same-key', method: 'POST', path: '/v1/tasks', status: 201, headers: {}, body, now: Date.now() });
  return { replayed: false, body };
});
db.close();
process.stdout.write(JSON.stringify(result));`;
    const runs = await Promise.all([1, 2, 3, 4].map(() => runScriptProcess(script)));
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
    const results = runs.map((run) => JSON.parse(run.stdout) as { replayed: boolean; body: string });
    expect(results.filter((result) => !result.replayed)).toHaveLength(1);
    expect(new Set(results.map((result) => result.body)).size).toBe(1);
    const db = openDatabase(t.path);
    try {
      expect(db.prepare("SELECT count(*) FROM tasks WHERE title = 'Once'").pluck().get()).toBe(1);
      expect(db.prepare("SELECT count(*) FROM events WHERE type = 'task.created'").pluck().get()).toBe(1);
    } finally {
      db.close();
    }
  });
});
