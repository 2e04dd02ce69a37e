// What the connector suites share: the app started against a local GitHub (test/support/githubApiServer.ts)
// on an injected clock, and the calls of /v1/connectors as the demo owner's all-scope PAT.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startGithubApiServer, type GithubApiServer } from './githubApiServer.js';
import { expectSuccess, jsonHeaders } from './workPlatform.js';
import { startTestApp, type WorkPlatformTestApp } from './testApp.js';

export interface ConnectorTestApp extends WorkPlatformTestApp {
  github: GithubApiServer;
  clock: { now: number };
}

/** Starts a local GitHub and the app pointed at it (connector requests time out after 400 ms), for the file's tests. */
export function useConnectorTestApp(use: (app: ConnectorTestApp) => void): void {
  let app: ConnectorTestApp | undefined;
  beforeAll(async () => {
    const github = await startGithubApiServer();
    const clock = { now: Date.now() };
    const started = (await startTestApp({ liftCallLimits: true, env: { GITHUB_API_BASE_URL: github.baseUrl, CONNECTOR_TIMEOUT_MS: '400' }, now: () => clock.now })).workPlatform;
    app = { ...started, github, clock };
    use(app);
  });
  afterAll(async () => {
    await app?.t.close();
    await app?.github.close();
  });
}

export function connectorCalls(app: () => WorkPlatformTestApp) {
  const send = (method: string, url: string, body?: unknown, token = app().fx.tokens.all, extra: Record<string, string> = {}) =>
    app().client.request(method, url, { headers: jsonHeaders(token, extra), body: body === undefined ? undefined : JSON.stringify(body) });
  return {
    send,
    create: (body: unknown, token?: string) => send('POST', '/v1/connectors', body, token),
    get: (id: string, token?: string) => send('GET', `/v1/connectors/${id}`, undefined, token),
    connect: (id: string, body: unknown, token?: string) => send('PUT', `/v1/connectors/${id}/connection`, body, token),
    disconnect: (id: string, token?: string) => send('DELETE', `/v1/connectors/${id}/connection`, undefined, token),
    importIssues: (id: string, body: unknown, token?: string, extra?: Record<string, string>) => send('POST', `/v1/connectors/${id}/issue-imports`, body, token, extra),
    /** A new GitHub connector of the demo workspace, connected with `token`. */
    async connected(token: string, name = 'GitHub (test)'): Promise<{ id: string; version: number }> {
      const created = expectSuccess(await send('POST', '/v1/connectors', { kind: 'github', name }), 201);
      return expectSuccess(await send('PUT', `/v1/connectors/${created.id}/connection`, { token }), 200);
    },
  };
}

/** The bytes of the app's SQLite file and its write-ahead log: what a stolen disk would show. */
export function databaseBytes(dataDir: string): Buffer {
  const file = path.join(dataDir, 'app.db');
  return Buffer.concat([file, `${file}-wal`].filter((candidate) => existsSync(candidate)).map((candidate) => readFileSync(candidate)));
}
