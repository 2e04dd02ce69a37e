import { describe, expect, it } from 'vitest';
import type { ContractClient } from '../support/contractClient.js';
import { bearer, type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { expectProblem, expectSuccess } from '../support/workPlatform.js';
import { workPlatformCalls } from '../support/workPlatformApp.js';

let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, client, fx } = app), { liftCallLimits: true });

const { getTask, newTask } = workPlatformCalls(() => ({ t, client, fx }));

describe('GET /v1/tasks/{taskId}', () => {
  it('answers 200 with the task as created, its version as ETag', async () => {
    const created = await newTask('Read me back');
    const response = await getTask(created.id);
    expect(expectSuccess(response, 200)).toEqual(created);
    expect(response.headers['etag']).toBe(`"${created.version}"`);
  });

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

describe('workspace isolation', () => {
  it("answers another workspace's token 404 for this workspace's task", async () => {
    const task = await client.get(`/v1/tasks/${fx.taskIds[0]}`, bearer(fx.otherWorkspace.token));
    expectProblem(task, 404, 'not-found', 'task-not-found');
  });
});
