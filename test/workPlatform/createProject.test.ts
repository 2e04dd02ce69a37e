import { describe, expect, it } from 'vitest';
import type { ContractClient } from '../support/contractClient.js';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { demoUsers, eventsAbout, expectProblem, expectSuccess } from '../support/workPlatform.js';
import { workPlatformCalls } from '../support/workPlatformApp.js';

let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, client, fx } = app), { liftCallLimits: true });

const { headers, createProject, getProject } = workPlatformCalls(() => ({ t, client, fx }));

describe('POST /v1/projects', () => {
  it('answers 201 with the full project, Location and ETag, filling the documented defaults', async () => {
    const response = await createProject({ name: 'Brand refresh' });
    const project = expectSuccess(response, 201);
    expect(project).toEqual({
      id: expect.stringMatching(/^prj_[A-Za-z0-9]+$/),
      name: 'Brand refresh',
      description: null,
      status: 'ACTIVE',
      version: 1,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(project.updatedAt).toBe(project.createdAt);
    expect(response.headers['location']).toBe(`/v1/projects/${project.id}`);
    expect(response.headers['etag']).toBe('"1"');
    const fetched = await getProject(project.id);
    expect(expectSuccess(fetched, 200)).toEqual(project);
    expect(fetched.headers['etag']).toBe('"1"');
  });

  it('stores every field it is given, and records project.created', async () => {
    const sent = { name: 'Archive', description: 'Old things', status: 'ARCHIVED' };
    const project = expectSuccess(await createProject(sent), 201);
    expect(project).toMatchObject(sent);
    const events = await eventsAbout(t.store, project.id);
    expect(events.map((event) => event.type)).toEqual(['project.created']);
    expect(events[0]!.payload).toMatchObject({ tenantId: fx.workspaceId, actor: { id: demoUsers.owner.id, kind: 'USER' }, data: { object: project } });
  });

  it('answers 422 listing every failing field, with codes of the closed set', async () => {
    const problem = expectProblem(await createProject({ description: 7, status: 'GONE', color: 'red' }), 422, 'validation', null);
    expect(Object.fromEntries(problem.errors.map((issue: { path: string; code: string }) => [issue.path, issue.code]))).toEqual({
      '/name': 'required',
      '/description': 'invalid_type',
      '/status': 'invalid_enum_value',
      '/color': 'unrecognized_keys',
    });
    const empty = expectProblem(await createProject({ name: '' }), 422, 'validation');
    expect(empty.errors).toEqual([{ path: '/name', code: 'too_small', message: expect.any(String) }]);
  });

  it('takes the documented storage limits and answers 400 value-too-long one character past them', async () => {
    expectSuccess(await createProject({ name: 'n'.repeat(120), description: 'd'.repeat(2000) }), 201);
    expectProblem(await createProject({ name: 'n'.repeat(121) }), 400, 'bad-request', 'value-too-long');
    expectProblem(await createProject({ name: 'ok', description: 'd'.repeat(2001) }), 400, 'bad-request', 'value-too-long');
  });

  it('answers 400 invalid-json and 415 for bodies that are not JSON', async () => {
    expectProblem(await client.request('POST', '/v1/projects', { headers: headers(), body: "{'name': 'x'}" }), 400, 'bad-request', 'invalid-json');
    const plain = await client.request('POST', '/v1/projects', { headers: headers({ 'content-type': 'text/plain' }), body: '{"name":"x"}' });
    expectProblem(plain, 415, 'unsupported-media-type');
  });
});
