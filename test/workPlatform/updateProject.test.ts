import { describe, expect, it } from 'vitest';
import type { ContractClient } from '../support/contractClient.js';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { eventsAbout, expectProblem, expectSuccess } from '../support/workPlatform.js';
import { workPlatformCalls } from '../support/workPlatformApp.js';

let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, client, fx } = app), { liftCallLimits: true });

const { createProject, updateProject, getProject, newProject, allEvents } = workPlatformCalls(() => ({ t, client, fx }));

describe('PATCH /v1/projects/{projectId}', () => {
  it('accepts If-Match bare and quoted, one version per change, and records project.updated', async () => {
    const project = await newProject();
    const bare = await updateProject(project.id, { name: 'Renamed' }, '1');
    expect(expectSuccess(bare, 200)).toMatchObject({ name: 'Renamed', version: 2 });
    expect(bare.headers['etag']).toBe('"2"');
    const quoted = await updateProject(project.id, { description: 'Now described', status: 'ARCHIVED' }, '"2"');
    expect(expectSuccess(quoted, 200)).toMatchObject({ name: 'Renamed', description: 'Now described', status: 'ARCHIVED', version: 3 });
    expect(quoted.headers['etag']).toBe('"3"');
    expect((await getProject(project.id)).body).toEqual(quoted.body);
    expect((await eventsAbout(t.store, project.id)).map((event) => event.type)).toEqual(['project.created', 'project.updated', 'project.updated']);
  });

  it('answers 409 version-conflict when stale, 428 without If-Match, 400 for weak or garbage tags, and records nothing', async () => {
    const project = await newProject();
    expectSuccess(await updateProject(project.id, { name: 'v2' }, '1'), 200);
    const count = await allEvents();
    expectProblem(await updateProject(project.id, { name: 'lost' }, '1'), 409, 'conflict', 'version-conflict');
    expectProblem(await updateProject(project.id, { name: 'lost' }, '"1"'), 409, 'conflict', 'version-conflict');
    expectProblem(await updateProject(project.id, { name: 'lost' }), 428, 'precondition-required');
    expectProblem(await updateProject(project.id, { name: 'lost' }, 'W/"2"'), 400, 'bad-request', 'invalid-if-match');
    expectProblem(await updateProject(project.id, { name: 'lost' }, 'two'), 400, 'bad-request', 'invalid-if-match');
    expectProblem(await updateProject(project.id, { name: '' }, '2'), 422, 'validation');
    expectProblem(await updateProject(project.id, { name: 'n'.repeat(121) }, '2'), 400, 'bad-request', 'value-too-long');
    expect(await allEvents()).toBe(count);
    expect((await getProject(project.id)).body).toMatchObject({ name: 'v2', version: 2 });
  });

  it('clears the description with null', async () => {
    const project = expectSuccess(await createProject({ name: 'Described', description: 'yes' }), 201);
    expect(expectSuccess(await updateProject(project.id, { description: null }, '1'), 200)).toMatchObject({ description: null, version: 2 });
  });
});
