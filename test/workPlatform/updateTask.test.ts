import { describe, expect, it } from 'vitest';
import type { ContractClient } from '../support/contractClient.js';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { demoUsers, eventsAbout, expectProblem, expectSuccess } from '../support/workPlatform.js';
import { workPlatformCalls } from '../support/workPlatformApp.js';

let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, client, fx } = app), { liftCallLimits: true });

const { createTask, updateTask, getTask, newTask, allEvents } = workPlatformCalls(() => ({ t, client, fx }));

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

  it('stamps completedAt when the status becomes DONE and clears it when it leaves DONE', async () => {
    const task = await newTask();
    const done = expectSuccess(await updateTask(task.id, { status: 'DONE' }, '1'), 200);
    expect(done.completedAt).toBe(done.updatedAt);
    const reopened = expectSuccess(await updateTask(task.id, { status: 'TODO' }, '2'), 200);
    expect(reopened.completedAt).toBeNull();
    expect(expectSuccess(await getTask(task.id), 200).completedAt).toBeNull();
  });

  it('clears nullable fields with null', async () => {
    const created = expectSuccess(await createTask({ projectId: fx.projectId, title: 'Due', dueOn: '2026-12-24T00:00:00.000Z', assigneeId: demoUsers.admin.id }), 201);
    const updated = expectSuccess(await updateTask(created.id, { dueOn: null, assigneeId: null }, '1'), 200);
    expect(updated).toMatchObject({ dueOn: null, assigneeId: null, version: 2 });
  });

  it('answers 409 version-conflict to a stale version, changing nothing', async () => {
    const task = await newTask();
    expectSuccess(await updateTask(task.id, { title: 'v2' }, '1'), 200);
    const events = await allEvents();
    const stale = await updateTask(task.id, { title: 'lost update' }, '"1"');
    expectProblem(stale, 409, 'conflict', 'version-conflict');
    const ahead = await updateTask(task.id, { title: 'lost update' }, '7');
    expectProblem(ahead, 409, 'conflict', 'version-conflict');
    expect((await getTask(task.id)).body).toMatchObject({ title: 'v2', version: 2 });
    expect(await allEvents()).toBe(events);
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
    const events = await eventsAbout(t.store, task.id);
    expect(events.map((event) => event.type)).toEqual(['task.created', 'task.updated', 'task.completed']);
    for (const event of events.slice(1)) {
      expect(event.payload).toMatchObject({ tenantId: fx.workspaceId, actor: { id: demoUsers.owner.id }, data: { object: done } });
    }

    const count = await allEvents();
    expectProblem(await updateTask(task.id, { status: 'TODO' }, '1'), 409, 'conflict', 'version-conflict');
    expectProblem(await updateTask(task.id, { status: 'NOPE' }, '2'), 422, 'validation');
    expectProblem(await updateTask(task.id, { status: 'TODO' }), 428, 'precondition-required');
    expectProblem(await updateTask(task.id, { title: 'y'.repeat(201) }, '2'), 400, 'bad-request', 'value-too-long');
    expect(await allEvents()).toBe(count);

    // Another change that is not a completion records task.updated alone.
    expectSuccess(await updateTask(task.id, { title: 'Finished' }, '2'), 200);
    expect((await eventsAbout(t.store, task.id)).map((event) => event.type)).toEqual(['task.created', 'task.updated', 'task.completed', 'task.updated']);
  });

  it('records task.completed only when the status becomes DONE, not for changes to a task that is already DONE', async () => {
    const task = expectSuccess(await createTask({ projectId: fx.projectId, title: 'Already done', status: 'DONE' }), 201);
    expectSuccess(await updateTask(task.id, { title: 'Still done', status: 'DONE' }, '1'), 200);
    expectSuccess(await updateTask(task.id, { status: 'IN_PROGRESS' }, '2'), 200);
    expectSuccess(await updateTask(task.id, { status: 'DONE' }, '3'), 200);
    expect((await eventsAbout(t.store, task.id)).map((event) => event.type)).toEqual([
      'task.created',
      'task.updated',
      'task.updated',
      'task.updated',
      'task.completed',
    ]);
  });

  it('writes nothing for a change that changes nothing: same version, updatedAt and events', async () => {
    const task = expectSuccess(await createTask({ projectId: fx.projectId, title: 'Stable', status: 'DONE' }), 201);
    const count = await allEvents();
    const response = await updateTask(task.id, { title: 'Stable', status: 'DONE' }, '1');
    expect(expectSuccess(response, 200)).toEqual(task);
    expect(response.headers['etag']).toBe('"1"');
    expect(await allEvents()).toBe(count);
  });
});
