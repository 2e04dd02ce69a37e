import { describe, expect, it } from 'vitest';
import type { ContractClient } from '../support/contractClient.js';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { eventsAbout, expectProblem, expectSuccess } from '../support/workPlatform.js';
import { workPlatformCalls } from '../support/workPlatformApp.js';

let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, client, fx } = app), { liftCallLimits: true });

const { headers, deleteProject, getProject, newProject } = workPlatformCalls(() => ({ t, client, fx }));

describe('DELETE /v1/projects/{projectId}', () => {
  it('answers 204, then 404, and records project.deleted', async () => {
    const project = await newProject('Short-lived');
    const deleted = await deleteProject(project.id);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expectProblem(await getProject(project.id), 404, 'not-found', 'project-not-found');
    expectProblem(await deleteProject(project.id), 404, 'not-found', 'project-not-found');
    expect((await eventsAbout(t.store, project.id)).map((event) => event.type)).toEqual(['project.created', 'project.deleted']);
  });

  it('answers 409 project-has-tasks while the project has tasks', async () => {
    const project = await newProject('Busy');
    const task = expectSuccess(
      await client.request('POST', '/v1/tasks', { headers: headers(), body: JSON.stringify({ projectId: project.id, title: 'Keeps it busy' }) }),
      201,
    );
    expectProblem(await deleteProject(project.id), 409, 'conflict', 'project-has-tasks');
    expect((await client.request('DELETE', `/v1/tasks/${task.id}`, { headers: headers() })).status).toBe(204);
    expect((await deleteProject(project.id)).status).toBe(204);
  });

  it('checks If-Match when sent', async () => {
    const project = await newProject();
    expectProblem(await deleteProject(project.id, { 'if-match': '"5"' }), 409, 'conflict', 'version-conflict');
    expect((await getProject(project.id)).status).toBe(200);
    expect((await deleteProject(project.id, { 'if-match': '1' })).status).toBe(204);
  });
});
