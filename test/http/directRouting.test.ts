import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { ContractClient, type CheckedResponse } from '../support/contractClient.js';
import { authorizeAndExchange, discover, registerTestClient } from '../support/oauth.js';
import { memoryLogger, startTestApp, type TestApp } from '../support/testApp.js';

/**
 * The pipeline routes, identifies and authenticates by itself (src/contract/pipeline.ts, routeDirectly);
 * openapi-backend's handleRequest did it before and is kept as the reference. Two apps on the same
 * database, one each way, must answer every request of the matrix alike: status, headers and body.
 */
let t: TestApp;
let reference: RunningApp;
/** An OAuth access token with tasks:read only: the oauth2 scheme accepts it, bearerAuth refuses it. */
let oauthToken: string;
const clients: Record<'direct' | 'reference', Record<'portfolio' | 'workPlatform', ContractClient>> = {} as never;

beforeAll(async () => {
  t = await startTestApp({ liftCallLimits: true });
  const config = {
    ...loadConfig({
      DATABASE_PATH: path.join(t.dataDir, 'app.db'),
      PORT: '0',
      HOST: '127.0.0.1',
      RESPONSE_VALIDATION: 'enforce',
      PORTFOLIO_RATE_LIMIT: '1000000',
      WEBHOOK_WORKER: 'off',
      GITHUB_API_BASE_URL: 'http://127.0.0.1:9',
    }),
    // The same public URL: the same documents, and the same audience for OAuth access tokens.
    publicBaseUrl: t.app.publicBaseUrl,
    routing: 'openapi-backend' as const,
  };
  reference = await startApp(config, { logger: memoryLogger([]), db: t.db });
  const clientsOf = (url: string) => ({ portfolio: new ContractClient(url), workPlatform: new ContractClient(url, 'work-platform', 'Problem') });
  clients.direct = clientsOf(t.app.url);
  clients.reference = clientsOf(reference.url);
  const registered = await registerTestClient(t.db, { workspaceId: t.fixture.workPlatform.workspaceId, scopes: ['tasks:read'] });
  const tokens = await authorizeAndExchange(await discover(t.app.publicBaseUrl), registered, { sessionToken: t.fixture.workPlatform.tokens.session, scope: 'tasks:read' });
  oauthToken = tokens.access_token;
});

afterAll(async () => {
  await reference?.close();
  await t?.close();
});

interface Probe {
  name: string;
  api: 'portfolio' | 'workPlatform';
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** What must be equal: the rate-limit counters move with every call, so their values are left out (not their presence). */
function comparable(response: CheckedResponse): unknown {
  const headers = Object.fromEntries(
    Object.entries(response.headers)
      .filter(([name]) => name !== 'date')
      .map(([name, value]) => [name, /ratelimit|quota/i.test(name) ? '(counter)' : value]),
  );
  return { status: response.status, headers, text: response.text };
}

describe('direct routing answers as openapi-backend handleRequest did', () => {
  const probes = (): Probe[] => {
    const fx = t.fixture;
    const key = { authorization: `Bearer ${fx.portfolio.apiKey}` };
    const pat = { authorization: `Bearer ${fx.workPlatform.tokens.all}` };
    const taskId = fx.workPlatform.taskIds[0]!;
    const origin = fx.workPlatform.allowedOrigin;
    const json = { 'content-type': 'application/json' };
    return [
      { name: 'portfolio', api: 'portfolio', method: 'GET', path: '/api/v1/portfolio', headers: key },
      { name: 'portfolio, trailing slash', api: 'portfolio', method: 'GET', path: '/api/v1/portfolio/', headers: key },
      { name: 'portfolio, two trailing slashes', api: 'portfolio', method: 'GET', path: '/api/v1/portfolio//', headers: key },
      { name: 'portfolio without a credential', api: 'portfolio', method: 'GET', path: '/api/v1/portfolio' },
      { name: 'portfolio, another scheme', api: 'portfolio', method: 'GET', path: '/api/v1/portfolio', headers: { authorization: 'Basic dXNlcjpwYXNz' } },
      { name: 'portfolio, unknown key', api: 'portfolio', method: 'GET', path: '/api/v1/portfolio', headers: { authorization: `Bearer ${fx.portfolio.apiKey.slice(0, -2)}xx` } },
      { name: 'portfolio, revoked key', api: 'portfolio', method: 'GET', path: '/api/v1/portfolio', headers: { authorization: `Bearer ${fx.portfolio.revokedApiKey}` } },
      { name: 'portfolio, expired key', api: 'portfolio', method: 'GET', path: '/api/v1/portfolio', headers: { authorization: `Bearer ${fx.portfolio.expiredApiKey}` } },
      { name: 'portfolio, unpublished', api: 'portfolio', method: 'GET', path: '/api/v1/portfolio', headers: { authorization: `Bearer ${fx.portfolio.unpublishedApiKey}` } },
      { name: 'portfolio, cookies', api: 'portfolio', method: 'GET', path: '/api/v1/portfolio', headers: { ...key, cookie: 'a=1; b=%E2%82%AC; c' } },
      { name: 'portfolio, HEAD', api: 'portfolio', method: 'HEAD', path: '/api/v1/portfolio', headers: key },
      { name: 'portfolio, wrong method', api: 'portfolio', method: 'POST', path: '/api/v1/portfolio', headers: { ...key, ...json }, body: '{}' },
      { name: 'portfolio, DELETE without a credential', api: 'portfolio', method: 'DELETE', path: '/api/v1/portfolio' },
      { name: 'portfolio, OPTIONS', api: 'portfolio', method: 'OPTIONS', path: '/api/v1/portfolio', headers: key },
      { name: 'portfolio, unknown path', api: 'portfolio', method: 'GET', path: '/api/v1/nothing-here', headers: key },
      { name: 'portfolio, unknown path without a credential', api: 'portfolio', method: 'GET', path: '/api/v1/nothing/here/at/all' },
      { name: 'posts, query', api: 'portfolio', method: 'GET', path: '/api/v1/posts?limit=2', headers: key },
      { name: 'posts, repeated name', api: 'portfolio', method: 'GET', path: '/api/v1/posts?limit=2&limit=3', headers: key },
      { name: 'posts, empty value', api: 'portfolio', method: 'GET', path: '/api/v1/posts?limit=', headers: key },
      { name: 'posts, not a number', api: 'portfolio', method: 'GET', path: '/api/v1/posts?limit=1e1', headers: key },
      { name: 'posts, bracketed and dotted names', api: 'portfolio', method: 'GET', path: '/api/v1/posts?limit[]=2&a.b=1&c[d]=e', headers: key },
      { name: 'posts, percent-encoded query', api: 'portfolio', method: 'GET', path: '/api/v1/posts?limit=%32&x=%E2%82%AC%ZZ', headers: key },
      { name: 'post by slug', api: 'portfolio', method: 'GET', path: `/api/v1/posts/${fx.portfolio.published.posts[0]}`, headers: key },
      { name: 'post, percent-encoded slug', api: 'portfolio', method: 'GET', path: `/api/v1/posts/${encodeURIComponent(fx.portfolio.published.posts[0]!).replace(/-/g, '%2D')}`, headers: key },
      { name: 'post, non-ASCII slug', api: 'portfolio', method: 'GET', path: '/api/v1/posts/%E2%82%AC', headers: key },
      { name: 'post, broken percent-encoding', api: 'portfolio', method: 'GET', path: '/api/v1/posts/%ZZ', headers: key },
      { name: 'post, encoded slash', api: 'portfolio', method: 'GET', path: '/api/v1/posts/a%2Fb', headers: key },
      { name: 'public document', api: 'portfolio', method: 'GET', path: '/api/v1/changelog.json' },
      { name: 'public document with a bad credential', api: 'portfolio', method: 'GET', path: '/api/v1/changelog.json', headers: { authorization: 'Bearer nope' } },

      { name: 'tasks', api: 'workPlatform', method: 'GET', path: '/v1/tasks?limit=3', headers: pat },
      { name: 'tasks, session', api: 'workPlatform', method: 'GET', path: '/v1/tasks?limit=3', headers: { authorization: `Bearer ${fx.workPlatform.tokens.session}` } },
      { name: 'tasks, expired session', api: 'workPlatform', method: 'GET', path: '/v1/tasks?limit=3', headers: { authorization: `Bearer ${fx.workPlatform.tokens.expiredSession}` } },
      { name: 'tasks, revoked token', api: 'workPlatform', method: 'GET', path: '/v1/tasks', headers: { authorization: `Bearer ${fx.workPlatform.tokens.revoked}` } },
      { name: 'tasks, token without scopes', api: 'workPlatform', method: 'GET', path: '/v1/tasks', headers: { authorization: `Bearer ${fx.workPlatform.tokens.noScopes}` } },
      { name: 'tasks, OAuth access token', api: 'workPlatform', method: 'GET', path: '/v1/tasks?limit=3', headers: { authorization: `Bearer ${oauthToken}` } },
      { name: 'projects, OAuth access token without the scope', api: 'workPlatform', method: 'GET', path: '/v1/projects', headers: { authorization: `Bearer ${oauthToken}` } },
      { name: 'create task, OAuth access token without the scope', api: 'workPlatform', method: 'POST', path: '/v1/tasks', headers: { authorization: `Bearer ${oauthToken}`, ...json }, body: '{}' },
      { name: 'tasks without a credential', api: 'workPlatform', method: 'GET', path: '/v1/tasks' },
      { name: 'tasks, malformed credential', api: 'workPlatform', method: 'GET', path: '/v1/tasks', headers: { authorization: 'Bearer' } },
      { name: 'tasks, trailing slash', api: 'workPlatform', method: 'GET', path: '/v1/tasks/?limit=2', headers: pat },
      { name: 'tasks, repeated enum', api: 'workPlatform', method: 'GET', path: '/v1/tasks?status=TODO&status=DONE', headers: pat },
      { name: 'tasks, comma-separated values', api: 'workPlatform', method: 'GET', path: '/v1/tasks?status=TODO,DONE&limit=2', headers: pat },
      { name: 'tasks, bracketed name', api: 'workPlatform', method: 'GET', path: '/v1/tasks?status[]=TODO&limit=2', headers: pat },
      { name: 'tasks, bad limit', api: 'workPlatform', method: 'GET', path: '/v1/tasks?limit=abc', headers: pat },
      { name: 'tasks, cookies', api: 'workPlatform', method: 'GET', path: '/v1/tasks?limit=2', headers: { ...pat, cookie: 'session=x; theme=dark' } },
      { name: 'tasks, HEAD', api: 'workPlatform', method: 'HEAD', path: '/v1/tasks?limit=2', headers: pat },
      { name: 'tasks, wrong method', api: 'workPlatform', method: 'DELETE', path: '/v1/tasks', headers: pat },
      { name: 'tasks, CORS preflight', api: 'workPlatform', method: 'OPTIONS', path: '/v1/tasks', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' } },
      { name: 'tasks, CORS preflight from another origin', api: 'workPlatform', method: 'OPTIONS', path: '/v1/tasks', headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' } },
      { name: 'tasks, OPTIONS without a preflight', api: 'workPlatform', method: 'OPTIONS', path: '/v1/tasks', headers: pat },
      { name: 'tasks, allowed origin', api: 'workPlatform', method: 'GET', path: '/v1/tasks?limit=2', headers: { ...pat, origin } },
      { name: 'tasks, refused origin', api: 'workPlatform', method: 'GET', path: '/v1/tasks?limit=2', headers: { ...pat, origin: 'https://evil.example' } },
      { name: 'task', api: 'workPlatform', method: 'GET', path: `/v1/tasks/${taskId}`, headers: pat },
      { name: 'task, percent-encoded id', api: 'workPlatform', method: 'GET', path: `/v1/tasks/${taskId.replace('_', '%5F')}`, headers: pat },
      { name: 'task, unknown id', api: 'workPlatform', method: 'GET', path: '/v1/tasks/tsk_doesNotExist', headers: pat },
      { name: 'task, broken percent-encoding', api: 'workPlatform', method: 'GET', path: '/v1/tasks/%E2%82', headers: pat },
      { name: 'task, wrong method', api: 'workPlatform', method: 'PUT', path: `/v1/tasks/${taskId}`, headers: pat },
      { name: 'task, nested unknown path', api: 'workPlatform', method: 'GET', path: `/v1/tasks/${taskId}/comments`, headers: pat },
      { name: 'create task, invalid body', api: 'workPlatform', method: 'POST', path: '/v1/tasks', headers: { ...pat, ...json }, body: '{"title": 5}' },
      { name: 'create task, not JSON', api: 'workPlatform', method: 'POST', path: '/v1/tasks', headers: { ...pat, ...json }, body: '{"title":' },
      { name: 'create task, other media type', api: 'workPlatform', method: 'POST', path: '/v1/tasks', headers: { ...pat, 'content-type': 'text/plain' }, body: 'title' },
      { name: 'create task without a credential', api: 'workPlatform', method: 'POST', path: '/v1/tasks', headers: json, body: '{}' },
      { name: 'unknown path', api: 'workPlatform', method: 'GET', path: '/v1/nothing', headers: pat },
      { name: 'unknown path without a credential', api: 'workPlatform', method: 'POST', path: '/v1/nothing' },
      { name: 'public document', api: 'workPlatform', method: 'GET', path: '/v1/changelog.json' },
      { name: 'workspace limits', api: 'workPlatform', method: 'GET', path: '/v1/workspace/limits', headers: pat },
    ];
  };

  it('for every request of the matrix', async () => {
    const differences: string[] = [];
    for (const [index, probe] of probes().entries()) {
      // The same request id for both, so that the answers that quote it are the same bytes.
      const headers = { ...probe.headers, 'x-request-id': `req_direct_routing_${index}` };
      const [direct, stock] = await Promise.all(
        (['direct', 'reference'] as const).map((way) => clients[way][probe.api].request(probe.method, probe.path, { headers, body: probe.body })),
      );
      try {
        expect(comparable(direct!)).toEqual(comparable(stock!));
      } catch {
        differences.push(`${probe.name}: ${probe.method} ${probe.path}\n  direct ${JSON.stringify(comparable(direct!))}\n  stock  ${JSON.stringify(comparable(stock!))}`);
      }
    }
    expect(differences).toEqual([]);
  });

  it('covers 401, 403, 404, 405 with Allow, 400, 415, a preflight and a refused origin', async () => {
    const statuses = new Set<number>();
    let allow: string | undefined;
    for (const probe of probes()) {
      const answer = await clients.direct[probe.api].request(probe.method, probe.path, { headers: probe.headers, body: probe.body });
      statuses.add(answer.status);
      if (answer.status === 405) allow ??= answer.headers.allow;
    }
    for (const status of [200, 204, 400, 401, 403, 404, 405, 415]) expect(statuses).toContain(status);
    expect(allow).toMatch(/GET/);
    // The second scheme's caller is served: bearerAuth refused the OAuth token, oauth2 accepted it.
    expect((await clients.direct.workPlatform.get('/v1/tasks?limit=1', { authorization: `Bearer ${oauthToken}` })).status).toBe(200);
  });
});
