import { describe, expect, it } from 'vitest';
import type { ContractClient } from '../support/contractClient.js';
import { bearer, type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { demoUsers, eventsAbout, expectProblem, expectSuccess, jsonHeaders } from '../support/workPlatform.js';
import { workPlatformCalls } from '../support/workPlatformApp.js';

let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, client, fx } = app), { liftCallLimits: true });

const { headers, createTask, getTask, newTask, allEvents } = workPlatformCalls(() => ({ t, client, fx }));

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
      completedAt: null,
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
    const count = () => t.sql.value<number>('SELECT count(*) AS count FROM tasks');
    const before = await count();
    expectProblem(await createTask({ projectId: fx.otherWorkspace.projectId, title: 'x' }), 404, 'not-found', 'project-not-found');
    expectProblem(await createTask({ projectId: 'prj_ZZZZZZZZZZZZZZZZZZZZ', title: 'x' }), 404, 'not-found', 'project-not-found');
    expectProblem(await createTask({ projectId: fx.projectId, title: 'x', assigneeId: demoUsers.otherOwner.id }), 404, 'not-found', 'user-not-found');
    expect(await count()).toBe(before);
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
    const events = await eventsAbout(t.store, task.id);
    expect(events.map((event) => event.type)).toEqual(['task.created']);
    expect(events[0]!.payload).toMatchObject({
      type: 'task.created',
      tenantId: fx.workspaceId,
      actor: { id: demoUsers.owner.id, kind: 'USER' },
      data: { object: { id: task.id, version: 1 } },
    });
  });
});

describe('an unexpected failure', () => {
  it('answers a generic 500 problem, leaks nothing, keeps the CORS headers and logs the cause under the request id', async () => {
    // A trigger stands in for a failing disk: the store's insert throws the engine's error.
    const removeFailure = await t.sql.failInserts('tasks', "NEW.title = 'explode'", 'disk says no at /var/data/app.db');
    try {
      const count = await allEvents();
      const response = await client.request('POST', '/v1/tasks', {
        headers: headers({ origin: fx.allowedOrigin }),
        body: JSON.stringify({ projectId: fx.projectId, title: 'explode' }),
      });
      const problem = expectProblem(response, 500, 'internal', null);
      expect(problem.detail).toBe('An unexpected error occurred. Quote the request id when reporting it.');
      expect(response.text).not.toMatch(/disk says no|var\/data|sqlite|at /i);
      expect(response.headers['access-control-allow-origin']).toBe(fx.allowedOrigin);
      expect(await allEvents()).toBe(count);
      const logged = t.logLines.map((line) => JSON.parse(line)).find((entry) => entry.level === 'error' && entry.requestId === problem.requestId);
      expect(JSON.stringify(logged)).toContain('disk says no');
    } finally {
      await removeFailure();
    }
  });
});

describe('text that storage cannot hold', () => {
  it.each([
    ['an unpaired surrogate', '\ud800x'],
    ['a NUL character', '\u0000abc'],
  ])('answers 400 invalid-value for a title with %s, and stores nothing', async (_case, title) => {
    const before = await t.sql.value<number>('SELECT count(*) FROM tasks');
    const response = await client.request('POST', '/v1/tasks', { headers: jsonHeaders(fx.tokens.all), body: JSON.stringify({ projectId: fx.projectId, title }) });
    expectProblem(response, 400, 'bad-request', 'invalid-value');
    expect(await t.sql.value<number>('SELECT count(*) FROM tasks')).toBe(before);
  });
});

describe('workspace isolation', () => {
  it("refuses a task in another workspace's project with 404, creating nothing", async () => {
    const response = await client.request('POST', '/v1/tasks', {
      headers: { ...bearer(fx.tokens.all), 'content-type': 'application/json' },
      body: JSON.stringify({ projectId: fx.otherWorkspace.projectId, title: 'Smuggled' }),
    });
    expectProblem(response, 404, 'not-found', 'project-not-found');
    expect(await t.sql.value<number>("SELECT count(*) FROM tasks WHERE title = 'Smuggled'")).toBe(0);
  });
});
