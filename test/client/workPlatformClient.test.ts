// The typed client (src/client, the @work-platform/client package) against the real server: lists
// as async iterators, the retry policy of the error table with its Idempotency-Key kept across
// retries, problems as a union on their slug, the limit headers, the PKCE helper through the real
// authorization server, and the webhook verifier. Where a failure must be provoked (an answer
// lost after the server wrote, a 500, a 429) the test injects it into the fetch the client calls;
// everything else is the server's own answer.
import { describe, expect, it } from 'vitest';
import {
  createAuthorizationRequest,
  createPortfolioClient,
  createWorkPlatformClient,
  discover,
  exchangeCode,
  ProblemError,
  problemOf,
  quotaOf,
  rateLimitOf,
  refreshTokens,
  unwrap,
  verifyWebhook,
  type ClientOptions,
} from '../../src/client/index.js';
import { computeV1Signature } from '../../src/webhooks/signing.js';
import { approve, openConsentPage, registerTestClient, TEST_REDIRECT_URI, TestBrowser } from '../support/oauth.js';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';

let t: TestApp;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, fx } = app), { liftCallLimits: true });

interface Recorder {
  sleeps: number[];
  requests: Request[];
  options: Partial<ClientOptions>;
}

/** A client of the test server whose waits are recorded instead of slept, and whose requests are seen; `failWith` answers instead of the server. */
function recorder(failWith?: (request: Request, attempt: number) => Promise<Response | undefined>): Recorder {
  const record: Recorder = { sleeps: [], requests: [], options: {} };
  record.options = {
    sleep: async (ms) => void record.sleeps.push(ms),
    fetch: async (request) => {
      record.requests.push(request.clone());
      const injected = await failWith?.(request, record.requests.length);
      return injected ?? fetch(request);
    },
  };
  return record;
}

const client = (token: string, options: Partial<ClientOptions> = {}) => createWorkPlatformClient({ baseUrl: t.app.url, token, ...options });
const taskCount = () => (t.db.prepare('SELECT count(*) AS n FROM tasks WHERE workspace_id = ?').get(fx.workspaceId) as { n: number }).n;
const problemResponse = (status: number, slug: string, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ type: `https://errors.example/problems/${slug}`, title: slug, status, detail: 'injected', requestId: 'req_injected' }), {
    status,
    headers: { 'content-type': 'application/problem+json', ...headers },
  });

describe('lists', () => {
  it('iterate every item of a list, page after page, in order', async () => {
    const api = client(fx.tokens.all);
    const ids: string[] = [];
    for await (const task of api.paginate('/v1/tasks', { params: { query: { limit: 30, sort: 'createdAt', order: 'asc' } } })) ids.push(task.id);
    const stored = (t.db.prepare('SELECT id FROM tasks WHERE workspace_id = ? ORDER BY created_at, id').all(fx.workspaceId) as { id: string }[]).map((row) => row.id);
    expect(stored.length).toBeGreaterThan(60);
    expect(ids).toEqual(stored);
  });

  it('throw a ProblemError when a page answers a problem', async () => {
    const api = client(fx.tokens.noScopes);
    const pages = api.paginate('/v1/tasks');
    await expect(pages.next()).rejects.toMatchObject({ name: 'ProblemError', problem: { slug: 'insufficient-scope', status: 403, requiredScopes: ['tasks:read'] } });
  });
});

describe('retries and Idempotency-Key', () => {
  it('gives a POST an Idempotency-Key and keeps it when the answer was lost: the retry gets the stored answer, one task exists', async () => {
    const before = taskCount();
    const seen = recorder(async (request, attempt) => {
      if (attempt !== 1) return undefined;
      await fetch(request); // the server creates the task; its answer is lost on the way back
      return problemResponse(500, 'internal');
    });
    const api = client(fx.tokens.all, seen.options);
    const { data, response } = await api.POST('/v1/tasks', { body: { projectId: fx.projectId, title: 'Created once' } });
    expect(response.status).toBe(201);
    expect(response.headers.get('idempotent-replayed')).toBe('true');
    expect(data?.title).toBe('Created once');
    const keys = seen.requests.map((request) => request.headers.get('idempotency-key'));
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(seen.sleeps).toEqual([300]);
    expect(taskCount()).toBe(before + 1);
  });

  it('keeps a key the caller gives', async () => {
    const seen = recorder();
    await client(fx.tokens.all, seen.options).POST('/v1/tasks', { body: { projectId: fx.projectId, title: 'Own key' }, headers: { 'Idempotency-Key': 'caller-chosen-1' } });
    expect(seen.requests[0]!.headers.get('idempotency-key')).toBe('caller-chosen-1');
  });

  it('backs off 300 ms, 800 ms, 2 s on 500, then answers the last 500', async () => {
    const seen = recorder(async () => problemResponse(500, 'internal'));
    const { response, error } = await client(fx.tokens.all, seen.options).GET('/v1/tasks');
    expect(response.status).toBe(500);
    expect(problemOf(error)?.slug).toBe('internal');
    expect(seen.sleeps).toEqual([300, 800, 2000]);
    expect(seen.requests).toHaveLength(4);
  });

  it('waits Retry-After on 429 rate-limited, but never on 429 quota-exceeded', async () => {
    const limited = recorder(async (_request, attempt) => (attempt === 1 ? problemResponse(429, 'rate-limited', { 'retry-after': '2' }) : undefined));
    const { response } = await client(fx.tokens.all, limited.options).GET('/v1/tasks');
    expect(response.status).toBe(200);
    expect(limited.sleeps).toEqual([2000]);
    const spent = recorder(async () => problemResponse(429, 'quota-exceeded', { 'retry-after': '30' }));
    const answer = await client(fx.tokens.all, spent.options).GET('/v1/tasks');
    expect(answer.response.status).toBe(429);
    expect(spent.requests).toHaveLength(1);
    expect(spent.sleeps).toEqual([]);
  });

  it('never retries a 409 version-conflict or another 4xx: one request each, the typed problem in a ProblemError', async () => {
    const seen = recorder();
    const api = client(fx.tokens.all, seen.options);
    const created = await unwrap(api.POST('/v1/tasks', { body: { projectId: fx.projectId, title: 'Versioned' } }));
    await unwrap(api.PATCH('/v1/tasks/{taskId}', { params: { path: { taskId: created.id }, header: { 'If-Match': '"1"' } }, body: { title: 'Second' } }));
    const stale = await unwrap(api.PATCH('/v1/tasks/{taskId}', { params: { path: { taskId: created.id }, header: { 'If-Match': '"1"' } }, body: { title: 'Lost update' } })).catch((error: unknown) => error);
    expect(stale).toBeInstanceOf(ProblemError);
    const problem = (stale as ProblemError).problem;
    expect(problem.slug).toBe('conflict');
    if (problem.slug === 'conflict') expect(problem.status).toBe(409);
    expect(problem.code).toBe('version-conflict');
    const missing = await api.GET('/v1/tasks/{taskId}', { params: { path: { taskId: 'tsk_ZZZZZZZZZZZZZZZZZZZZ' } } });
    expect(problemOf(missing.error)).toMatchObject({ slug: 'not-found', status: 404, code: 'task-not-found' });
    expect(seen.requests.map((request) => request.method)).toEqual(['POST', 'PATCH', 'PATCH', 'GET']);
    expect(seen.sleeps).toEqual([]);
  });
});

describe('limit headers', () => {
  it('reads the rate limit and the monthly quota of a real answer', async () => {
    const { response } = await client(fx.tokens.all).GET('/v1/tasks', { params: { query: { limit: 1 } } });
    const rate = rateLimitOf(response)!;
    expect(rate.class).toBe('read');
    expect(rate.limit).toBeGreaterThan(0);
    expect(rate.remaining).toBeLessThanOrEqual(rate.limit);
    expect(rate.resetAt.getTime()).toBeGreaterThan(Date.now() - 1000);
    const quota = quotaOf(response);
    expect(quota === undefined || quota.remaining <= quota.limit).toBe(true);
    expect(rateLimitOf((await client(fx.tokens.all).GET('/v1/openapi.json')).response)).toBeUndefined();
  });
});

describe('OAuth 2.0 with PKCE', () => {
  it('authorizes through the real authorization server, exchanges the code, calls the API with the token, and refreshes', async () => {
    const registered = await registerTestClient(t.db, { workspaceId: fx.workspaceId, scopes: ['tasks:read'] });
    const metadata = await discover(t.app.publicBaseUrl);
    const pending = await createAuthorizationRequest(metadata, { clientId: registered.id, redirectUri: TEST_REDIRECT_URI, scopes: ['tasks:read'] });
    expect(new URL(pending.url).searchParams.get('code_challenge_method')).toBe('S256');
    const browser = new TestBrowser();
    const consent = await openConsentPage(browser, pending.url, fx.tokens.session);
    const landed = consent.url.startsWith(TEST_REDIRECT_URI) ? consent : await approve(browser, consent, ['tasks:read']);
    const tokens = await exchangeCode(metadata, landed.url, { ...pending, clientId: registered.id, redirectUri: TEST_REDIRECT_URI });
    expect(tokens.scope).toBe('tasks:read');
    const page = await unwrap(client(tokens.access_token).GET('/v1/tasks', { params: { query: { limit: 2 } } }));
    expect(page.items).toHaveLength(2);
    const refreshed = await refreshTokens(metadata, tokens.refresh_token!, { clientId: registered.id });
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    await expect(refreshTokens(metadata, tokens.refresh_token!, { clientId: registered.id })).rejects.toMatchObject({ name: 'OAuthError', error: 'invalid_grant' });
    await expect(exchangeCode(metadata, `${TEST_REDIRECT_URI}?code=x&state=other`, { ...pending, clientId: registered.id, redirectUri: TEST_REDIRECT_URI })).rejects.toMatchObject({ error: 'state_mismatch' });
  });
});

describe('the portfolio client and the webhook verifier', () => {
  it('reads the portfolio with an API key', async () => {
    const portfolio = createPortfolioClient({ baseUrl: t.app.url, token: t.fixture.portfolio.apiKey });
    const { data, response } = await portfolio.GET('/api/v1/profile');
    expect(response.status).toBe(200);
    expect(data).toBeDefined();
  });

  it('exports the verifier subscribers run: a signed delivery verifies, a changed body does not', () => {
    const secret = 'whsec_' + 'a'.repeat(43);
    const body = JSON.stringify({ id: 'evt_1', type: 'task.created', apiVersion: '2026-11-23', createdAt: '2026-11-25T00:00:00.000Z', tenantId: 'wsp_1', actor: { kind: 'USER', id: 'usr_1' }, data: { object: {} } });
    const now = 1_790_000_000;
    const headers = { 'svc-signature': `t=${now},v1=${computeV1Signature(secret, now, body)}` };
    expect(verifyWebhook(body, headers, secret, { now: () => now * 1000 }).id).toBe('evt_1');
    expect(() => verifyWebhook(body.replace('evt_1', 'evt_2'), headers, secret, { now: () => now * 1000 })).toThrow(/no v1 signature matches/);
  });
});

