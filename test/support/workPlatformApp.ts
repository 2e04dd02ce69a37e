// The running app of the Work-Platform (/v1) operation suites and the calls they share, so each
// test/workPlatform/<operationId>.test.ts holds its cases, not its set-up.
import { afterAll, beforeAll } from 'vitest';
import type { ContractClient, CheckedResponse } from './contractClient.js';
import { startTestApp, type TestApp } from './testApp.js';
import { expectSuccess, jsonHeaders, liftCallLimits } from './workPlatform.js';

export type WorkPlatformFixture = TestApp['fixture']['workPlatform'];

export interface WorkPlatformTestApp {
  t: TestApp;
  /** The contract-validating client of /v1. */
  client: ContractClient;
  fx: WorkPlatformFixture;
}

/** The test app with the /v1 call limits of both demo workspaces lifted out of reach. */
export async function startWorkPlatformTestApp(options: Parameters<typeof startTestApp>[0] = {}): Promise<WorkPlatformTestApp> {
  const t = await startTestApp(options);
  const fx = t.fixture.workPlatform;
  await liftCallLimits(t.store, fx.workspaceId);
  await liftCallLimits(t.store, fx.otherWorkspace.workspaceId);
  return { t, client: t.workPlatformClient, fx };
}

/** `useTestApp` for the /v1 suites: starts `startWorkPlatformTestApp` before the file's tests, closes it after them. */
export function useWorkPlatformTestApp(use: (app: WorkPlatformTestApp) => unknown, options: Parameters<typeof startTestApp>[0] = {}): void {
  let app: WorkPlatformTestApp | undefined;
  beforeAll(async () => {
    app = await startWorkPlatformTestApp(options);
    await use(app);
  });
  afterAll(async () => {
    await app?.t.close();
  });
}

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
