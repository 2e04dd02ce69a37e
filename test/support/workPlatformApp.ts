// The calls the Work-Platform (/v1) operation suites share, so each test/workPlatform/<operationId>.test.ts
// holds its cases, not its set-up. The suites start their app with useTestApp(…, { liftCallLimits: true }).
import type { CheckedResponse } from './contractClient.js';
import type { WorkPlatformTestApp } from './testApp.js';
import { expectSuccess, jsonHeaders } from './workPlatform.js';

/**
 * Task and project calls as the demo owner's all-scope PAT. `app` is read at each call, so the
 * calls can be made before the app is started (in `beforeAll`).
 */
export function workPlatformCalls(app: () => WorkPlatformTestApp) {
  const headers = (extra: Record<string, string> = {}) => jsonHeaders(app().fx.tokens.all, extra);
  const ifMatchHeader = (ifMatch?: string) => headers(ifMatch === undefined ? {} : { 'if-match': ifMatch });
  const send = (method: string, path: string, body?: unknown, extra: Record<string, string> = {}) =>
    app().client.request(method, path, { headers: headers(extra), body: body === undefined ? undefined : JSON.stringify(body) });

  const createTask = (body: unknown, extra: Record<string, string> = {}) => send('POST', '/v1/tasks', body, extra);
  const createProject = (body: unknown) => send('POST', '/v1/projects', body);
  return {
    headers,
    createTask,
    updateTask: (id: string, body: unknown, ifMatch?: string) =>
      app().client.request('PATCH', `/v1/tasks/${id}`, { headers: ifMatchHeader(ifMatch), body: JSON.stringify(body) }),
    getTask: (id: string) => app().client.get(`/v1/tasks/${id}`, headers()),
    async newTask(title = 'A task'): Promise<{ id: string; version: number }> {
      return expectSuccess(await createTask({ projectId: app().fx.projectId, title }), 201);
    },
    createProject,
    updateProject: (id: string, body: unknown, ifMatch?: string) =>
      app().client.request('PATCH', `/v1/projects/${id}`, { headers: ifMatchHeader(ifMatch), body: JSON.stringify(body) }),
    deleteProject: (id: string, extra: Record<string, string> = {}): Promise<CheckedResponse> => send('DELETE', `/v1/projects/${id}`, undefined, extra),
    getProject: (id: string) => app().client.get(`/v1/projects/${id}`, headers()),
    async newProject(name = 'A project'): Promise<{ id: string; version: number }> {
      return expectSuccess(await createProject({ name }), 201);
    },
    /** Every event recorded in the outbox, of any workspace. */
    allEvents: () => app().t.sql.value<number>('SELECT count(*) FROM events'),
  };
}

/**
 * A request of the operation suites as the demo owner's all-scope PAT unless a token is given, with a
 * JSON body when one is given. `app` is read at each call, so it can be made before the app starts.
 */
export function ownerRequests(app: () => WorkPlatformTestApp) {
  const send = (method: string, path: string, body?: unknown, extra: Record<string, string> = {}, token?: string) =>
    app().client.request(method, path, {
      headers: jsonHeaders(token ?? app().fx.tokens.all, extra),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const ifMatch = (version?: string): Record<string, string> => (version === undefined ? {} : { 'if-match': version });
  return { send, ifMatch };
}
