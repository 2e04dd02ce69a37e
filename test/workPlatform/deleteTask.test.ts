import { describe, expect, it } from 'vitest';
import type { ContractClient } from '../support/contractClient.js';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { eventsAbout, expectProblem } from '../support/workPlatform.js';
import { workPlatformCalls } from '../support/workPlatformApp.js';

let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, client, fx } = app), { liftCallLimits: true });

const { headers, getTask, newTask } = workPlatformCalls(() => ({ t, client, fx }));

describe('DELETE /v1/tasks/{taskId}', () => {
  it('answers 204 without a body, then 404, and records task.deleted', async () => {
    const task = await newTask('Delete me');
    const deleted = await client.request('DELETE', `/v1/tasks/${task.id}`, { headers: headers() });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expectProblem(await getTask(task.id), 404, 'not-found', 'task-not-found');
    expectProblem(await client.request('DELETE', `/v1/tasks/${task.id}`, { headers: headers() }), 404, 'not-found', 'task-not-found');
    expect((await eventsAbout(t.store, task.id)).map((event) => event.type)).toEqual(['task.created', 'task.deleted']);
  });

  it('checks If-Match when sent', async () => {
    const task = await newTask();
    expectProblem(await client.request('DELETE', `/v1/tasks/${task.id}`, { headers: headers({ 'if-match': '"2"' }) }), 409, 'conflict', 'version-conflict');
    expectProblem(await client.request('DELETE', `/v1/tasks/${task.id}`, { headers: headers({ 'if-match': 'W/"1"' }) }), 400, 'bad-request', 'invalid-if-match');
    expect((await getTask(task.id)).status).toBe(200);
    expect((await client.request('DELETE', `/v1/tasks/${task.id}`, { headers: headers({ 'if-match': '"1"' }) })).status).toBe(204);
  });
});
