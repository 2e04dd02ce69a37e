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
const createProject = (body: unknown) => client.request('POST', '/v1/projects', { headers: headers(), body: JSON.stringify(body) });
const updateProject = (id: string, body: unknown, ifMatch?: string) =>
  client.request('PATCH', `/v1/projects/${id}`, { headers: headers(ifMatch === undefined ? {} : { 'if-match': ifMatch }), body: JSON.stringify(body) });
const deleteProject = (id: string, extra: Record<string, string> = {}) => client.request('DELETE', `/v1/projects/${id}`, { headers: headers(extra) });
const getProject = (id: string) => client.get(`/v1/projects/${id}`, headers());
const allEvents = () => (t.db.prepare('SELECT count(*) AS count FROM events').get() as { count: number }).count;

async function newProject(name = 'A project'): Promise<{ id: string; version: number }> {
  return expectSuccess(await createProject({ name }), 201);
}

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
    const events = eventsAbout(t.db, project.id);
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
    expect(eventsAbout(t.db, project.id).map((event) => event.type)).toEqual(['project.created', 'project.updated', 'project.updated']);
  });

  it('answers 409 version-conflict when stale, 428 without If-Match, 400 for weak or garbage tags, and records nothing', async () => {
    const project = await newProject();
    expectSuccess(await updateProject(project.id, { name: 'v2' }, '1'), 200);
    const count = allEvents();
    expectProblem(await updateProject(project.id, { name: 'lost' }, '1'), 409, 'conflict', 'version-conflict');
    expectProblem(await updateProject(project.id, { name: 'lost' }, '"1"'), 409, 'conflict', 'version-conflict');
    expectProblem(await updateProject(project.id, { name: 'lost' }), 428, 'precondition-required');
    expectProblem(await updateProject(project.id, { name: 'lost' }, 'W/"2"'), 400, 'bad-request', 'invalid-if-match');
    expectProblem(await updateProject(project.id, { name: 'lost' }, 'two'), 400, 'bad-request', 'invalid-if-match');
    expectProblem(await updateProject(project.id, { name: '' }, '2'), 422, 'validation');
    expectProblem(await updateProject(project.id, { name: 'n'.repeat(121) }, '2'), 400, 'bad-request', 'value-too-long');
    expect(allEvents()).toBe(count);
    expect((await getProject(project.id)).body).toMatchObject({ name: 'v2', version: 2 });
  });

  it('clears the description with null', async () => {
    const project = expectSuccess(await createProject({ name: 'Described', description: 'yes' }), 201);
    expect(expectSuccess(await updateProject(project.id, { description: null }, '1'), 200)).toMatchObject({ description: null, version: 2 });
  });
});

describe('DELETE /v1/projects/{projectId}', () => {
  it('answers 204, then 404, and records project.deleted', async () => {
    const project = await newProject('Short-lived');
    const deleted = await deleteProject(project.id);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expectProblem(await getProject(project.id), 404, 'not-found', 'project-not-found');
    expectProblem(await deleteProject(project.id), 404, 'not-found', 'project-not-found');
    expect(eventsAbout(t.db, project.id).map((event) => event.type)).toEqual(['project.created', 'project.deleted']);
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
