// Nothing secret and no personal data reaches a log line. Every credential shape the server mints
// or receives, the stored connector credential (a shape no pattern knows), the AI provider's key and
// an email address are planted where the server meets them: in the error bodies of a local GitHub
// and a local AI provider (which echo what they were sent, as real upstreams sometimes do), and in
// the headers and bodies of requests to every surface. The server runs over real HTTP on port 0;
// then the whole log output is scanned for every planted value: 0 hits.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectorCalls } from '../support/connectors.js';
import { startGithubApiServer, type GithubApiServer } from '../support/githubApiServer.js';
import { startOpenAiCompatibleServer, type OpenAiCompatibleServer } from '../support/openAiCompatibleServer.js';
import { jsonHeaders, liftCallLimits, makeTestWorkspace, sessionClaims, signJwt, type TestWorkspace } from '../support/workPlatform.js';
import { startTestApp, type WorkPlatformTestApp } from '../support/testApp.js';

const random = (bytes = 32) => randomBytes(bytes).toString('base64url');
/** Letters and digits only, so that a value is not split by the patterns' own boundaries. */
const alnum = (length: number) => randomBytes(length * 2).toString('hex').slice(0, length);

/** What is planted, by kind; each value is new on every run, so a hit can only come from this run's planting. */
const planted = {
  'svc_pat_ (personal access token)': `svc_pat_${random()}`,
  'pfk_ (portfolio API key)': `pfk_${random()}`,
  'session JWT': signJwt({ alg: 'HS256', typ: 'JWT' }, sessionClaims({ userId: 'usr_planted', workspaceId: 'wsp_planted' }), randomBytes(32)),
  'OAuth access token (43-character opaque)': random(),
  'OAuth client secret (svc_ocs_)': `svc_ocs_${random()}`,
  'webhook signing secret (whsec_)': `whsec_${random(24)}`,
  'ghp_ (GitHub classic token)': `ghp_${alnum(36)}`,
  'gho_ (GitHub OAuth token)': `gho_${alnum(36)}`,
  'github_pat_ (GitHub fine-grained token)': `github_pat_${alnum(22)}_${alnum(59)}`,
  'sk- (AI provider key)': `sk-proj-${alnum(40)}`,
  'Bearer value': alnum(20),
  'Basic value': Buffer.from(`planted-user:${alnum(16)}`).toString('base64'),
  'token= value': alnum(18),
  'key= value': alnum(18),
  'password= value': alnum(18),
  'stored connector credential (no known shape)': `Zx!${alnum(10)}~cred.${alnum(8)}`,
  'contact email': `ava.${alnum(8)}@planted-customer.test`,
} as const;
type Kind = keyof typeof planted;
/** The secrets written as they would appear in an upstream's words. */
const inWords = [
  `Bearer ${planted['Bearer value']}`,
  `Authorization: Basic ${planted['Basic value']}`,
  `token=${planted['token= value']}`,
  `key=${planted['key= value']}&password=${planted['password= value']}`,
  `"password": "${planted['password= value']}"`,
  `contact ${planted['contact email']}`,
  ...(Object.keys(planted) as Kind[]).filter((kind) => !/value|email|stored/.test(kind)).map((kind) => planted[kind]),
];

let github: GithubApiServer;
let provider: OpenAiCompatibleServer;
let app: WorkPlatformTestApp;
let workspace: TestWorkspace;
const calls = connectorCalls(() => app);

beforeAll(async () => {
  github = await startGithubApiServer();
  provider = await startOpenAiCompatibleServer();
  app = (await startTestApp({
    liftCallLimits: true,
    env: {
      GITHUB_API_BASE_URL: github.baseUrl,
      CONNECTOR_TIMEOUT_MS: '2000',
      AI_PROVIDER: 'openai-compatible',
      AI_BASE_URL: provider.baseUrl,
      AI_API_KEY: planted['sk- (AI provider key)'],
      AI_MODEL: 'test-model-1',
      LOG_REQUESTS: 'on',
    },
  })).workPlatform;
  workspace = await makeTestWorkspace(app.t.db, app.t.sessionSecret, { plan: 'pro' });
  await liftCallLimits(app.t.db, workspace.workspaceId);
});
afterAll(async () => {
  await app?.t.close();
  await github?.close();
  await provider?.close();
});

async function rawStatus(path: string, init: RequestInit): Promise<number> {
  const response = await fetch(`${app.t.app.url}${path}`, init);
  await response.arrayBuffer();
  return response.status;
}

describe('log output', () => {
  it('holds none of the planted secrets and personal data, from upstream error bodies or from requests', async () => {
    const { t } = app;
    // 1. GitHub's error bodies echo the credential they were sent, for every credential shape it takes.
    github.respondWith({ kind: 'echo-credentials', status: 500, planted: inWords });
    for (const credential of [planted['ghp_ (GitHub classic token)'], planted['gho_ (GitHub OAuth token)'], planted['github_pat_ (GitHub fine-grained token)'], planted['stored connector credential (no known shape)']]) {
      const created = await calls.create({ kind: 'github', name: 'Echoing GitHub' });
      expect(created.status).toBe(201);
      expect((await calls.connect(created.body.id, { token: credential })).status).toBe(502);
    }
    // The stored credential itself: connected while GitHub behaves, then echoed back by GitHub's failure on import.
    github.respondWith({ kind: 'normal' });
    const connector = await calls.connected(planted['stored connector credential (no known shape)']);
    const project = await calls.send('POST', '/v1/projects', { name: 'Imports' });
    github.respondWith({ kind: 'echo-credentials', status: 503, planted: inWords });
    expect((await calls.importIssues(connector.id, { repository: 'acme/widgets', projectId: project.body.id })).status).toBe(502);

    // 2. The AI provider's error body echoes its key and the planted words.
    provider.respondWith({ kind: 'echo-credentials', status: 401, planted: inWords });
    const draft = await app.client.request('POST', '/v1/ai/task-drafts', {
      headers: jsonHeaders(workspace.pat),
      body: JSON.stringify({ projectId: workspace.projectId, text: `Call ${planted['contact email']}` }),
    });
    expect(draft.status).toBe(502);

    // 3. Every credential shape in request headers, on every surface; and personal data in a body.
    const authorizations = [
      `Bearer ${planted['svc_pat_ (personal access token)']}`,
      `Bearer ${planted['pfk_ (portfolio API key)']}`,
      `Bearer ${planted['session JWT']}`,
      `Bearer ${planted['OAuth access token (43-character opaque)']}`,
      `Bearer ${planted['ghp_ (GitHub classic token)']}`,
      `Bearer ${planted['Bearer value']}`,
      `Basic ${planted['Basic value']}`,
    ];
    for (const authorization of authorizations) {
      const headers = { authorization, cookie: `session=${planted['session JWT']}`, 'x-api-key': planted['pfk_ (portfolio API key)'] };
      expect(await rawStatus('/v1/tasks?limit=1', { headers })).toBe(401);
      expect(await rawStatus(`/api/v1/profile?key=${planted['key= value']}`, { headers })).toBe(401);
      expect(await rawStatus('/v1/mcp', { method: 'POST', headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' })).toBe(401);
    }
    const tokenStatus = await rawStatus('/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${planted['Basic value']}` },
      body: `grant_type=client_credentials&client_id=ocl_planted&client_secret=${planted['OAuth client secret (svc_ocs_)']}&password=${planted['password= value']}`,
    });
    expect(tokenStatus).toBeGreaterThanOrEqual(400);
    const introspect = await rawStatus('/oauth/introspect', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${planted['OAuth access token (43-character opaque)']}&client_id=ocl_planted&client_secret=${planted['OAuth client secret (svc_ocs_)']}`,
    });
    expect(introspect).toBeGreaterThanOrEqual(400);
    const withEmail = await calls.send('POST', '/v1/projects', { name: 'Contact', description: planted['contact email'], unexpected: planted['password= value'] });
    expect(withEmail.status).toBe(422);

    // The failures were logged, with the upstreams' words, scrubbed: the scan below looks at real lines.
    const lines = [...t.logLines];
    const upstreamLines = lines.filter((line) => /answered 50[03]/.test(line) || /answered 401/.test(line));
    expect(upstreamLines.length).toBeGreaterThanOrEqual(6);
    expect(upstreamLines.every((line) => line.includes('[redacted]'))).toBe(true);

    // The scan: every planted value, in every form a log line could carry it (as is, JSON-escaped, URL-encoded).
    const hits: Record<string, number> = {};
    for (const [kind, value] of Object.entries(planted)) {
      const forms = new Set([value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value)]);
      hits[kind] = lines.filter((line) => [...forms].some((form) => line.includes(form))).length;
    }
    console.log(JSON.stringify({ linesScanned: lines.length, bytesScanned: lines.join('\n').length, kindsPlanted: Object.keys(planted).length, upstreamErrorLines: upstreamLines.length, hits }, null, 1));
    expect(hits).toEqual(Object.fromEntries(Object.keys(planted).map((kind) => [kind, 0])));
  });
});
