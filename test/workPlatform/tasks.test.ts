import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContractClient } from '../support/contractClient.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { demoUsers, eventsAbout, expectProblem, expectSuccess, jsonHeaders, liftCallLimits } from '../support/workPlatform.js';

let t: TestApp;
let client: ContractClient;
let fx: TestApp['fixture']['workPlatform'];
beforeAll(async () => {
  t = await startTestApp();
  client = t.workPlatformClient;
  fx = t.fixture.workPlatform;
  liftCallLimits(t.db, fx.workspaceId);
});
afterAll(async () => {
  await t?.close();
});

const headers = (extra: Record<string, string> = {}) => jsonHeaders(fx.tokens.all, extra);
const createTask = (body: unknown, extra: Record<string, string> = {}) =>
  client.request('POST', '/v1/tasks', { headers: headers(extra), body: JSON.stringify(body) });
const updateTask = (id: string, body: unknown, ifMatch?: string) =>
  client.request('PATCH', `/v1/tasks/${id}`, { headers: headers(ifMatch === undefined ? {} : { 'if-match': ifMatch }), body: JSON.stringify(body) });
const getTask = (id: string) => client.get(`/v1/tasks/${id}`, headers());
const allEvents = () => (t.db.prepare('SELECT count(*) AS count FROM events').get() as { count: number }).count;

async function newTask(title = 'A task'): Promise<{ id: string; version: number }> {
  return expectSuccess(await createTask({ projectId: fx.projectId, title }), 201);
}

describe('POST /v1/tasks', () => {
  it('answers 201 with the full task, Location and ETag, filling the documented defaults', async () => {
    const before = Date.now();
    const response = await createTask({ projectId: fx.projectId, title: 'Write the changelog' });
    const task = expectSuccess(response, 201);
    expect(task).toEqual({
      id: expect.stringMatching(/^tsk_[A-Za-z0-9]+$/),
      projectId: fx.projectId,
      title: 'Write the changelog',
      status: 'TODO',
      priority: 'MEDIUM',
      dueOn: null,
      assigneeId: null,
      version: 1,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(task.createdAt).toBe(task.updatedAt);
    expect(Date.parse(task.createdAt)).toBeGreaterThanOrEqual(before - 1);
    expect(response.headers['location']).toBe(`/v1/tasks/${task.id}`);
    expect(response.headers['etag']).toBe('"1"');
  });

  it('stores every field it is given, and GET returns the same task', async () => {
    const sent = {
      projectId: fx.projectId,
      title: 'Ship it',
      status: 'IN_PROGRESS',
      priority: 'HIGH',
      dueOn: '2026-12-01T17:00:00.000Z',
      assigneeId: demoUsers.member.id,
    };
    const created = expectSuccess(await createTask(sent), 201);
    expect(created).toMatchObject(sent);
    const fetched = await getTask(created.id);
    expect(expectSuccess(fetched, 200)).toEqual(created);
    expect(fetched.headers['etag']).toBe('"1"');
  });

  it("answers 404 for another workspace's project or user, creating nothing", async () => {
    const count = () => (t.db.prepare('SELECT count(*) AS count FROM tasks').get() as { count: number }).count;
    const before = count();
    expectProblem(await createTask({ projectId: fx.otherWorkspace.projectId, title: 'x' }), 404, 'not-found', 'project-not-found');
    expectProblem(await createTask({ projectId: 'prj_ZZZZZZZZZZZZZZZZZZZZ', title: 'x' }), 404, 'not-found', 'project-not-found');
    expectProblem(await createTask({ projectId: fx.projectId, title: 'x', assigneeId: demoUsers.otherOwner.id }), 404, 'not-found', 'user-not-found');
    expect(count()).toBe(before);
  });

  it('answers 422 listing every failing field, with codes of the closed set', async () => {
    const response = await createTask({ title: '', priority: 'URGENT', status: 5, dueOn: 'tomorrow', assigneeId: 'bob', extra: 1, other: true });
    const problem = expectProblem(response, 422, 'validation', null);
    const byPath = Object.fromEntries(problem.errors.map((issue: { path: string; code: string }) => [issue.path, issue.code]));
    expect(byPath).toEqual({
      '/projectId': 'required',
      '/title': 'too_small',
      '/priority': 'invalid_enum_value',
      // An enum given a value of another type still says which values it takes (a deliberate choice).
      '/status': 'invalid_enum_value',
      '/dueOn': 'invalid_format',
      '/assigneeId': 'invalid_format',
      '/extra': 'unrecognized_keys',
      '/other': 'unrecognized_keys',
    });
    expect(problem.errors).toHaveLength(8);
    for (const issue of problem.errors) expect(issue.message).toEqual(expect.any(String));
  });

  it.each([
    ['a number as title', { projectId: 'prj_x', title: 5 }, '/title', 'invalid_type'],
    ['an array as body', [], '', 'invalid_type'],
    ['null as dueOn is fine, a number is not', { projectId: 'prj_x', title: 'x', dueOn: 3 }, '/dueOn', 'invalid_type'],
  ])('answers 422 for %s', async (_case, body, path, code) => {
    const problem = expectProblem(await createTask(body), 422, 'validation');
    expect(problem.errors).toEqual([{ path, code, message: expect.any(String) }]);
  });

  it('takes a title of 200 characters and answers 400 value-too-long for 201', async () => {
    expectSuccess(await createTask({ projectId: fx.projectId, title: 't'.repeat(200) }), 201);
    expectProblem(await createTask({ projectId: fx.projectId, title: 't'.repeat(201) }), 400, 'bad-request', 'value-too-long');
  });

  it('answers 400 invalid-json to a body that does not parse', async () => {
    const response = await client.request('POST', '/v1/tasks', { headers: headers(), body: '{"title": "x",' });
    expectProblem(response, 400, 'bad-request', 'invalid-json');
  });

  it('answers 415 to a text/plain body', async () => {
    const response = await client.request('POST', '/v1/tasks', {
      headers: headers({ 'content-type': 'text/plain' }),
      body: JSON.stringify({ projectId: fx.projectId, title: 'x' }),
    });
    expectProblem(response, 415, 'unsupported-media-type');
  });

  it('records task.created in the outbox', async () => {
    const task = await newTask('Outbox on create');
    const events = eventsAbout(t.db, task.id);
    expect(events.map((event) => event.type)).toEqual(['task.created']);
    expect(events[0]!.payload).toMatchObject({
      type: 'task.created',
      tenantId: fx.workspaceId,
      actor: { id: demoUsers.owner.id, kind: 'USER' },
      data: { object: { id: task.id, version: 1 } },
    });
  });
});

describe('PATCH /v1/tasks/{taskId}', () => {
  it('accepts If-Match bare and quoted, and adds one to the version per change', async () => {
    const task = await newTask();
    const bare = await updateTask(task.id, { title: 'Renamed' }, '1');
    expect(expectSuccess(bare, 200)).toMatchObject({ id: task.id, title: 'Renamed', version: 2 });
    expect(bare.headers['etag']).toBe('"2"');
    const quoted = await updateTask(task.id, { priority: 'HIGH' }, '"2"');
    expect(expectSuccess(quoted, 200)).toMatchObject({ title: 'Renamed', priority: 'HIGH', version: 3 });
    expect(quoted.headers['etag']).toBe('"3"');
    const fetched = await getTask(task.id);
    expect(fetched.body).toEqual(quoted.body);
    expect(fetched.headers['etag']).toBe('"3"');
    expect(Date.parse(quoted.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(quoted.body.createdAt));
  });

  it('clears nullable fields with null', async () => {
    const created = expectSuccess(await createTask({ projectId: fx.projectId, title: 'Due', dueOn: '2026-12-24T00:00:00.000Z', assigneeId: demoUsers.admin.id }), 201);
    const updated = expectSuccess(await updateTask(created.id, { dueOn: null, assigneeId: null }, '1'), 200);
    expect(updated).toMatchObject({ dueOn: null, assigneeId: null, version: 2 });
  });

  it('answers 409 version-conflict to a stale version, changing nothing', async () => {
    const task = await newTask();
    expectSuccess(await updateTask(task.id, { title: 'v2' }, '1'), 200);
    const events = allEvents();
    const stale = await updateTask(task.id, { title: 'lost update' }, '"1"');
    expectProblem(stale, 409, 'conflict', 'version-conflict');
    const ahead = await updateTask(task.id, { title: 'lost update' }, '7');
    expectProblem(ahead, 409, 'conflict', 'version-conflict');
    expect((await getTask(task.id)).body).toMatchObject({ title: 'v2', version: 2 });
    expect(allEvents()).toBe(events);
  });

  it('answers 428 without If-Match', async () => {
    const task = await newTask();
    expectProblem(await updateTask(task.id, { title: 'x' }), 428, 'precondition-required');
  });

  it.each([['W/"1"'], ['"1", "2"'], ['abc'], ['*'], ['1.0'], ['-1'], ['""']])('answers 400 invalid-if-match to If-Match %s', async (ifMatch) => {
    const task = await newTask();
    expectProblem(await updateTask(task.id, { title: 'x' }, ifMatch), 400, 'bad-request', 'invalid-if-match');
    expect((await getTask(task.id)).body.version).toBe(1);
  });

  it("answers 404 for another workspace's project, and 404 for a missing task", async () => {
    const task = await newTask();
    expectProblem(await updateTask(task.id, { projectId: fx.otherWorkspace.projectId }, '1'), 404, 'not-found', 'project-not-found');
    expectProblem(await updateTask('tsk_ZZZZZZZZZZZZZZZZZZZZ', { title: 'x' }, '1'), 404, 'not-found', 'task-not-found');
    expect((await getTask(task.id)).body).toMatchObject({ projectId: fx.projectId, version: 1 });
  });

  it('answers 422 with every failing field, and 400 value-too-long for a long title', async () => {
    const task = await newTask();
    const problem = expectProblem(await updateTask(task.id, { status: 'FINISHED', title: '', id: 'tsk_x' }, '1'), 422, 'validation');
    expect(Object.fromEntries(problem.errors.map((issue: { path: string; code: string }) => [issue.path, issue.code]))).toEqual({
      '/status': 'invalid_enum_value',
      '/title': 'too_small',
      '/id': 'unrecognized_keys',
    });
    const empty = expectProblem(await updateTask(task.id, {}, '1'), 422, 'validation');
    expect(empty.errors).toEqual([{ path: '', code: 'too_small', message: expect.any(String) }]);
    expectProblem(await updateTask(task.id, { title: 'x'.repeat(201) }, '1'), 400, 'bad-request', 'value-too-long');
    expect((await getTask(task.id)).body.version).toBe(1);
  });

  it('records task.updated and task.completed when a task becomes DONE, and nothing for a refused change', async () => {
    const task = await newTask('Finish me');
    const done = expectSuccess(await updateTask(task.id, { status: 'DONE' }, '1'), 200);
    const events = eventsAbout(t.db, task.id);
    expect(events.map((event) => event.type)).toEqual(['task.created', 'task.updated', 'task.completed']);
    for (const event of events.slice(1)) {
      expect(event.payload).toMatchObject({ tenantId: fx.workspaceId, actor: { id: demoUsers.owner.id }, data: { object: done } });
    }

    const count = allEvents();
    expectProblem(await updateTask(task.id, { status: 'TODO' }, '1'), 409, 'conflict', 'version-conflict');
    expectProblem(await updateTask(task.id, { status: 'NOPE' }, '2'), 422, 'validation');
    expectProblem(await updateTask(task.id, { status: 'TODO' }), 428, 'precondition-required');
    expectProblem(await updateTask(task.id, { title: 'y'.repeat(201) }, '2'), 400, 'bad-request', 'value-too-long');
    expect(allEvents()).toBe(count);

    // Another change that is not a completion records task.updated alone.
    expectSuccess(await updateTask(task.id, { title: 'Finished' }, '2'), 200);
    expect(eventsAbout(t.db, task.id).map((event) => event.type)).toEqual(['task.created', 'task.updated', 'task.completed', 'task.updated']);
  });

  it('records task.completed only when the status becomes DONE, not for changes to a task that is already DONE', async () => {
    const task = expectSuccess(await createTask({ projectId: fx.projectId, title: 'Already done', status: 'DONE' }), 201);
    expectSuccess(await updateTask(task.id, { title: 'Still done', status: 'DONE' }, '1'), 200);
    expectSuccess(await updateTask(task.id, { status: 'IN_PROGRESS' }, '2'), 200);
    expectSuccess(await updateTask(task.id, { status: 'DONE' }, '3'), 200);
    expect(eventsAbout(t.db, task.id).map((event) => event.type)).toEqual([
      'task.created',
      'task.updated',
      'task.updated',
      'task.updated',
      'task.completed',
    ]);
  });

  it('writes nothing for a change that changes nothing: same version, updatedAt and events', async () => {
    const task = expectSuccess(await createTask({ projectId: fx.projectId, title: 'Stable', status: 'DONE' }), 201);
    const count = allEvents();
    const response = await updateTask(task.id, { title: 'Stable', status: 'DONE' }, '1');
    expect(expectSuccess(response, 200)).toEqual(task);
    expect(response.headers['etag']).toBe('"1"');
    expect(allEvents()).toBe(count);
  });
});

describe('DELETE /v1/tasks/{taskId}', () => {
  it('answers 204 without a body, then 404, and records task.deleted', async () => {
    const task = await newTask('Delete me');
    const deleted = await client.request('DELETE', `/v1/tasks/${task.id}`, { headers: headers() });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expectProblem(await getTask(task.id), 404, 'not-found', 'task-not-found');
    expectProblem(await client.request('DELETE', `/v1/tasks/${task.id}`, { headers: headers() }), 404, 'not-found', 'task-not-found');
    expect(eventsAbout(t.db, task.id).map((event) => event.type)).toEqual(['task.created', 'task.deleted']);
  });

  it('checks If-Match when sent', async () => {
    const task = await newTask();
    expectProblem(await client.request('DELETE', `/v1/tasks/${task.id}`, { headers: headers({ 'if-match': '"2"' }) }), 409, 'conflict', 'version-conflict');
    expectProblem(await client.request('DELETE', `/v1/tasks/${task.id}`, { headers: headers({ 'if-match': 'W/"1"' }) }), 400, 'bad-request', 'invalid-if-match');
    expect((await getTask(task.id)).status).toBe(200);
    expect((await client.request('DELETE', `/v1/tasks/${task.id}`, { headers: headers({ 'if-match': '"1"' }) })).status).toBe(204);
  });
});

describe('GET /v1/tasks/{taskId}', () => {
  it('answers 404 task-not-found for ids of any shape', async () => {
    for (const id of ['tsk_ZZZZZZZZZZZZZZZZZZZZ', 'hello', 'prj_K3Uv0fnoj8SvOOVDUdB5', '%20']) {
      expectProblem(await getTask(id), 404, 'not-found', 'task-not-found');
    }
  });

  it('serves a session caller the same task as a PAT caller', async () => {
    const viaPat = await getTask(fx.taskIds[5]!);
    const viaSession = await client.get(`/v1/tasks/${fx.taskIds[5]}`, { authorization: `Bearer ${fx.tokens.session}` });
    expect(viaSession.status).toBe(200);
    expect(viaSession.text).toBe(viaPat.text);
  });
});

describe('an unexpected failure', () => {
  it('answers a generic 500 problem, leaks nothing, keeps the CORS headers and logs the cause under the request id', async () => {
    // A trigger stands in for a failing disk: the store's insert throws an SQLite error.
    t.db.exec("CREATE TRIGGER fail_task_insert BEFORE INSERT ON tasks WHEN NEW.title = 'explode' BEGIN SELECT RAISE(ABORT, 'disk says no at /var/data/app.db'); END");
    try {
      const count = allEvents();
      const response = await client.request('POST', '/v1/tasks', {
        headers: headers({ origin: fx.allowedOrigin }),
        body: JSON.stringify({ projectId: fx.projectId, title: 'explode' }),
      });
      const problem = expectProblem(response, 500, 'internal', null);
      expect(problem.detail).toBe('An unexpected error occurred. Quote the request id when reporting it.');
      expect(response.text).not.toMatch(/disk says no|var\/data|sqlite|at /i);
      expect(response.headers['access-control-allow-origin']).toBe(fx.allowedOrigin);
      expect(allEvents()).toBe(count);
      const logged = t.logLines.map((line) => JSON.parse(line)).find((entry) => entry.level === 'error' && entry.requestId === problem.requestId);
      expect(JSON.stringify(logged)).toContain('disk says no');
    } finally {
      t.db.exec('DROP TRIGGER fail_task_insert');
    }
  });
});

describe('text that storage cannot hold', () => {
  it.each([
    ['an unpaired surrogate', '\ud800x'],
    ['a NUL character', '\u0000abc'],
  ])('answers 400 invalid-value for a title with %s, and stores nothing', async (_case, title) => {
    const response = await client.request('POST', '/v1/tasks', { headers: jsonHeaders(fx.tokens.all), body: JSON.stringify({ projectId: fx.projectId, title }) });
    expectProblem(response, 400, 'bad-request', 'invalid-value');
    expect(t.db.prepare('SELECT count(*) AS count FROM tasks WHERE title = ?').get(title)).toEqual({ count: 0 });
  });
});
