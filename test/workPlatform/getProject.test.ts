import { describe, expect, it } from 'vitest';
import type { ContractClient } from '../support/contractClient.js';
import { bearer, type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { expectProblem, expectSuccess, makePat } from '../support/workPlatform.js';
import { workPlatformCalls } from '../support/workPlatformApp.js';

let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, client, fx } = app), { liftCallLimits: true });

const { getProject, createProject } = workPlatformCalls(() => ({ t, client, fx }));

describe('GET /v1/projects/{projectId}', () => {
  it('answers 200 with the project as created, its version as ETag, to a PAT with projects:read only', async () => {
    const created = expectSuccess(await createProject({ name: 'Read me back', description: 'Described' }), 201);
    const response = await client.get(`/v1/projects/${created.id}`, bearer(await makePat(t.store, fx.workspaceId, ['projects:read'])));
    expect(expectSuccess(response, 200)).toEqual(created);
    expect(response.headers['etag']).toBe('"1"');
  });

  it('answers 404 project-not-found for ids of any shape, a task id included', async () => {
    for (const id of ['prj_ZZZZZZZZZZZZZZZZZZZZ', 'hello', fx.taskIds[0]!, '%20']) {
      expectProblem(await getProject(id), 404, 'not-found', 'project-not-found');
    }
  });
});

describe('workspace isolation', () => {
  it("answers another workspace's token 404 for this workspace's project", async () => {
    const project = await client.get(`/v1/projects/${fx.projectId}`, bearer(fx.otherWorkspace.token));
    expectProblem(project, 404, 'not-found', 'project-not-found');
  });
});
