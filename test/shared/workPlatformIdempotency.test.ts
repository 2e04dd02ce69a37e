import { describe, expect, it } from 'vitest';
import { createIdempotencyKeyStore } from '../../src/store/idempotencyKeys.js';
import type { ContractClient } from '../support/contractClient.js';
import { contractOperations } from '../support/operations.js';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { countRows, eventsAbout, expectProblem, expectSuccess, jsonHeaders } from '../support/workPlatform.js';

const hour = 60 * 60 * 1000;
let clock = Date.now();
let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, client, fx } = app), { liftCallLimits: true, now: () => clock });

let keyCounter = 0;
const newKey = () => `test-key-${Date.now()}-${++keyCounter}`;
const post = (path: string, body: unknown, key?: string, token = fx.tokens.all) =>
  client.request('POST', path, { headers: jsonHeaders(token, key === undefined ? {} : { 'idempotency-key': key }), body: JSON.stringify(body) });
const postTask = (body: unknown, key?: string, token?: string) => post('/v1/tasks', body, key, token);
const tasks = () => countRows(t.store, 'tasks', fx.workspaceId);
const taskBody = (title: string) => ({ projectId: fx.projectId, title });

describe('Idempotency-Key on POST', () => {
  it('replays the original 201 verbatim (status, body bytes, Location, ETag) with Idempotent-Replayed, creating nothing', async () => {
    const key = newKey();
    const first = await postTask(taskBody('Replay me'), key);
    expectSuccess(first, 201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const count = await tasks();

    const again = await postTask(taskBody('Replay me'), key);
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers['location']).toBe(first.headers['location']);
    expect(again.headers['etag']).toBe(first.headers['etag']);
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    expect(await tasks()).toBe(count);
    expect((await eventsAbout(t.store, first.body.id)).map((event) => event.type)).toEqual(['task.created']);
  });

  it('replays the original even when the body differs: matching is on the key', async () => {
    const key = newKey();
    const first = await postTask(taskBody('Original'), key);
    const count = await tasks();
    const different = await postTask({ ...taskBody('Something else'), priority: 'HIGH' }, key);
    expect(different.status).toBe(201);
    expect(different.text).toBe(first.text);
    expect(different.body.title).toBe('Original');
    expect(different.headers['idempotent-replayed']).toBe('true');
    expect(await tasks()).toBe(count);
  });

  it('replays the original even when the repeat would not validate or has another media type', async () => {
    const key = newKey();
    const first = await postTask(taskBody('Stored first'), key);
    const count = await tasks();
    const invalid = await postTask({ title: '' }, key);
    expect(invalid.status).toBe(201);
    expect(invalid.text).toBe(first.text);
    const textPlain = await client.request('POST', '/v1/tasks', {
      headers: { ...jsonHeaders(fx.tokens.all, { 'idempotency-key': key }), 'content-type': 'text/plain' },
      body: 'not json',
    });
    expect(textPlain.status).toBe(201);
    expect(textPlain.headers['idempotent-replayed']).toBe('true');
    expect(await tasks()).toBe(count);
  });

  it('rolls the resource and its event back when the answer cannot be stored', async () => {
    const key = newKey();
    const removeFailure = await t.sql.failInserts('idempotency_keys', `NEW.key = '${key}'`, 'injected failure');
    const count = await tasks();
    const events = (await t.sql.value<number>('SELECT count(*) AS count FROM events'));
    try {
      expectProblem(await postTask(taskBody('Never half-written'), key), 500, 'internal');
    } finally {
      await removeFailure();
    }
    expect(await tasks()).toBe(count);
    expect((await t.sql.value<number>('SELECT count(*) AS count FROM events'))).toBe(events);
  });

  it('replays to any caller of the same workspace, session included', async () => {
    const key = newKey();
    const first = await postTask(taskBody('Any caller'), key);
    const viaSession = await postTask(taskBody('Any caller'), key, fx.tokens.session);
    expect(viaSession.text).toBe(first.text);
    expect(viaSession.headers['idempotent-replayed']).toBe('true');
  });

  it('answers 409 idempotency-key-reused to the same key on another operation, creating nothing', async () => {
    const key = newKey();
    expectSuccess(await postTask(taskBody('Keyed task'), key), 201);
    const projects = await countRows(t.store, 'projects', fx.workspaceId);
    expectProblem(await post('/v1/projects', { name: 'Keyed project' }, key), 409, 'conflict', 'idempotency-key-reused');
    expect(await countRows(t.store, 'projects', fx.workspaceId)).toBe(projects);
  });

  it('keeps keys apart per workspace', async () => {
    const key = newKey();
    const mine = await postTask(taskBody('Mine'), key);
    const theirs = await postTask({ projectId: fx.otherWorkspace.projectId, title: 'Theirs' }, key, fx.otherWorkspace.token);
    expect(theirs.status).toBe(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.body.id).not.toBe(mine.body.id);
  });

  it.each([
    ['422 validation', { projectId: 'prj_x' }, 422],
    ['404 not-found (a project of another workspace)', { projectId: 'OTHER', title: 'Misfiled' }, 404],
    ['400 value-too-long', { projectId: 'MINE', title: 'x'.repeat(201) }, 400],
  ])('does not store a %s: the key acts when retried with a fixed body', async (_case, failingBody, status) => {
    const key = newKey();
    const body = JSON.parse(JSON.stringify(failingBody).replace('"OTHER"', JSON.stringify(fx.otherWorkspace.projectId)).replace('"MINE"', JSON.stringify(fx.projectId)));
    const count = await tasks();
    const failed = await postTask(body, key);
    expect(failed.status).toBe(status);
    expect(await tasks()).toBe(count);
    const fixed = await postTask(taskBody('Fixed'), key);
    expectSuccess(fixed, 201);
    expect(fixed.headers['idempotent-replayed']).toBeUndefined();
    expect(await tasks()).toBe(count + 1);
    expect((await postTask(taskBody('Fixed'), key)).headers['idempotent-replayed']).toBe('true');
  });

  it('does not store a 500: the whole transaction rolls back and the key acts on retry', async () => {
    const key = newKey();
    const removeFailure = await t.sql.failInserts('tasks', "NEW.title = 'Fails once'", 'injected failure');
    const count = await tasks();
    try {
      expectProblem(await postTask(taskBody('Fails once'), key), 500, 'internal');
    } finally {
      await removeFailure();
    }
    expect(await tasks()).toBe(count);
    expect((await t.sql.value<number>('SELECT count(*) AS count FROM idempotency_keys WHERE key = ?', key))).toBe(0);
    const retried = await postTask(taskBody('Fails once'), key);
    expectSuccess(retried, 201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
  });

  it('lets exactly one of ten concurrent requests with one key act; the others get its answer', async () => {
    const key = newKey();
    const count = await tasks();
    const answers = await Promise.all(Array.from({ length: 10 }, () => postTask(taskBody('Concurrent'), key)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(201));
    expect(new Set(answers.map((answer) => answer.body.id)).size).toBe(1);
    expect(new Set(answers.map((answer) => answer.text)).size).toBe(1);
    expect(answers.filter((answer) => answer.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect(await tasks()).toBe(count + 1);
    expect((await t.sql.value<number>("SELECT count(*) AS count FROM tasks WHERE title = 'Concurrent'"))).toBe(1);
  });

  it.each([
    ['a space', 'has space'],
    ['256 characters', 'k'.repeat(256)],
    ['a non-ASCII character', 'clé'],
  ])('answers 422 to a key with %s, creating nothing', async (_case, key) => {
    const count = await tasks();
    const problem = expectProblem(await postTask(taskBody('Bad key'), key), 422, 'validation');
    expect(problem.errors.map((issue: { path: string }) => issue.path)).toEqual(['idempotency-key']);
    expect(await tasks()).toBe(count);
  });

  it('takes a key of 255 printable characters', async () => {
    const key = `${newKey()}~!"#$%&'()*+,-./:;<=>?@[\\]^_\`{|}`.padEnd(255, 'z');
    expectSuccess(await postTask(taskBody('Long key'), key), 201);
    expect((await postTask(taskBody('Long key'), key)).headers['idempotent-replayed']).toBe('true');
  });
});

describe.each(contractOperations('work-platform').filter((operation) => operation.headerParameters.some((parameter) => parameter.name === 'idempotency-key')))(
  '$operationId ($method $template)',
  (operation) => {
    it('answers a malformed Idempotency-Key with the 422 validation it declares, naming the header', async () => {
      const headers = jsonHeaders(fx.tokens.all, { 'idempotency-key': 'has space' });
      const response = await client.request(operation.method, operation.examplePath, { headers, body: operation.hasRequestBody ? JSON.stringify(operation.requestBodyExample ?? {}) : undefined });
      const problem = expectProblem(response, 422, 'validation');
      expect(problem.errors.map((issue: { path: string }) => issue.path)).toEqual(['idempotency-key']);
    });
  },
);

describe('Idempotency-Key expiry (injected clock)', () => {
  it('replays for 24 hours, then acts again', async () => {
    const key = newKey();
    const first = await postTask(taskBody('Expiring'), key);
    clock += 24 * hour - 1;
    const late = await postTask(taskBody('Expiring'), key);
    expect(late.text).toBe(first.text);
    expect(late.headers['idempotent-replayed']).toBe('true');
    clock += 1;
    const count = await tasks();
    const fresh = await postTask(taskBody('Expiring'), key);
    expectSuccess(fresh, 201);
    expect(fresh.headers['idempotent-replayed']).toBeUndefined();
    expect(fresh.body.id).not.toBe(first.body.id);
    expect(await tasks()).toBe(count + 1);
    // The key now replays the new answer.
    expect((await postTask(taskBody('Expiring'), key)).body.id).toBe(fresh.body.id);
  });

  it('purgeExpiredIdempotencyKeys removes expired keys and keeps live ones', async () => {
    const expiring = newKey();
    expectSuccess(await postTask(taskBody('Purged'), expiring), 201);
    clock += 24 * hour;
    const live = newKey();
    expectSuccess(await postTask(taskBody('Kept'), live), 201);
    const stored = (key: string) => t.sql.value<number>('SELECT count(*) FROM idempotency_keys WHERE key = ?', key);
    expect(await stored(expiring)).toBe(1);

    const purged = await createIdempotencyKeyStore(t.store).purgeExpiredIdempotencyKeys(clock);
    expect(purged).toBeGreaterThanOrEqual(1);
    expect(await stored(expiring)).toBe(0);
    expect(await stored(live)).toBe(1);
    expect((await postTask(taskBody('Kept'), live)).headers['idempotent-replayed']).toBe('true');
  });
});
