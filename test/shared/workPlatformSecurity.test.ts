import { roleScopes, roles, scopeCatalogue, type Role } from '../../generated/work-platform/rules.js';
import { createUserStore } from '../../src/store/users.js';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ContractClient } from '../support/contractClient.js';
import { ResponseContract } from '../../src/contract/responseContract.js';
import { loadContractDocument } from '../support/contractClient.js';
import { authorizeAndExchange, discover, registerTestClient } from '../support/oauth.js';
import { contractOperations, type ContractOperation } from '../support/operations.js';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import {
  demoUsers,
  expectProblem,
  makePat,
  makeSession,
  sessionClaims,
  signJwt,
  withPlaceholders,
  } from '../support/workPlatform.js';

/**
 * The shared security suite of the Work-Platform API, derived from the served contract: every
 * operation, including one added later, is covered without editing this file.
 */
const operations = contractOperations('work-platform');
const authenticated = operations.filter((operation) => !operation.isPublic);
const publicOperations = operations.filter((operation) => operation.isPublic);
const byId = operations.filter((operation) => operation.pathParameters.length > 0);

const BLOCKED_ORIGIN = 'https://evil.example';
const EXPOSED_HEADERS = [
  'x-request-id',
  'location',
  'etag',
  'x-ratelimit-class',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'x-ratelimit-window-ms',
  'x-ratelimit-tier',
  'x-quota-limit',
  'x-quota-remaining',
  'x-quota-reset',
];

let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
let expiredPat: string;
/** An owner's PAT without scopes: refused by scope, never by role. */
let ownerWithoutScopes: string;
/** Per role: a user of the demo workspace, its session, and its PAT with every scope the role may hold. */
let asRole: Record<Role, { userId: string; session: string; pat: string }>;
/** Per role: a PAT minted with every scope while its user was an owner, after which the user was given this role. */
let changedTo: Record<Role, string>;
/** Per scope some operation requires: the owner's OAuth access token, issued by the authorization-code flow, granting every other scope. */
let oauthWithout: Record<string, string>;
useTestApp(async ({ workPlatform: app }) => {
  ({ t, client, fx } = app);
  expiredPat = await makePat(t.store, fx.workspaceId, scopeCatalogue, { expiresAt: Date.now() - 60_000, now: () => Date.now() - 3_600_000 });
  ownerWithoutScopes = await makePat(t.store, fx.workspaceId, []);
  const users = createUserStore(t.store);
  const entries = await Promise.all(
    roles.map(async (role) => {
      const { id: userId } = await users.createUser({ workspaceId: fx.workspaceId, role, name: `Security suite ${role}` });
      const held = { userId, session: makeSession(t.sessionSecret, { userId, workspaceId: fx.workspaceId }), pat: await makePat(t.store, fx.workspaceId, roleScopes[role], { userId }) };
      const { id: changedId } = await users.createUser({ workspaceId: fx.workspaceId, role: 'owner', name: `Security suite owner, then ${role}` });
      const minted = await makePat(t.store, fx.workspaceId, scopeCatalogue, { userId: changedId });
      await users.setUserRole(changedId, role);
      return [role, held, minted] as const;
    }),
  );
  asRole = Object.fromEntries(entries.map(([role, held]) => [role, held])) as typeof asRole;
  changedTo = Object.fromEntries(entries.map(([role, , minted]) => [role, minted])) as typeof changedTo;
  const authorizationServer = await discover(t.app.publicBaseUrl);
  const ownerSession = makeSession(t.sessionSecret, { userId: demoUsers.owner.id, workspaceId: fx.workspaceId });
  oauthWithout = {};
  for (const missing of new Set(authenticated.flatMap((operation) => operation.requiredScopes))) {
    const granted = scopeCatalogue.filter((scope) => scope !== missing);
    const registered = await registerTestClient(t.store, { workspaceId: fx.workspaceId, scopes: [...granted], name: `Security suite, all but ${missing}` });
    oauthWithout[missing] = (await authorizeAndExchange(authorizationServer, registered, { sessionToken: ownerSession, scope: granted.join(' ') })).access_token;
  }
}, { liftCallLimits: true });

/**
 * The resource a path parameter names, read from the contract: the GET that reads one
 * (`…/{name}` with no other parameter) and the id prefix its example shows (`tsk` of `tsk_…`).
 */
function resourceOf(name: string): { reader: ContractOperation; prefix: string } {
  const reader = operations.find((operation) => operation.method === 'GET' && operation.pathParameters.length === 1 && operation.template.endsWith(`/{${name}}`));
  if (!reader) throw new Error(`no GET …/{${name}} in the contract reads the resource ${name} names`);
  return { reader, prefix: reader.examplePath.split('/').at(-1)!.split('_')[0]! };
}

/** The demo's record of another workspace for a path parameter: `fx.otherWorkspace[name]`. */
function otherWorkspaceIdOf(name: string): string {
  return (fx.otherWorkspace as unknown as Record<string, string>)[name]!;
}

/** The operation as a client would send it: its example body and, where required, If-Match. */
function call(operation: ContractOperation, headers: Record<string, string>, path = operation.examplePath) {
  const sent: Record<string, string> = { ...headers };
  if (operation.hasRequestBody) sent['content-type'] ??= 'application/json';
  if (operation.headerParameters.some((parameter) => parameter.name === 'if-match' && parameter.required)) sent['if-match'] ??= '"1"';
  const body = operation.hasRequestBody ? JSON.stringify(operation.requestBodyExample ?? {}) : undefined;
  return client.request(operation.method, path, { headers: sent, body });
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const ownerClaims = () => sessionClaims({ userId: demoUsers.owner.id, workspaceId: fx.workspaceId });
const HS256 = { alg: 'HS256', typ: 'JWT' };

const unauthenticatedCases: [string, () => Record<string, string>][] = [
  ['no Authorization header', () => ({})],
  ['an empty Authorization header', () => ({ authorization: '' })],
  ['the Basic scheme', () => ({ authorization: 'Basic dXNlcjpwYXNz' })],
  ['a PAT without the Bearer scheme', () => ({ authorization: fx.tokens.all })],
  ['a garbage bearer token', () => bearer('not-a-token')],
  ['a malformed PAT (svc_pat_x)', () => bearer('svc_pat_x')],
  ['a well-formed PAT that was never issued', () => bearer(`svc_pat_${'A'.repeat(43)}`)],
  ['a well-formed OAuth access token that was never issued', () => bearer('A'.repeat(43))],
  ['a PAT with a character appended', () => bearer(`${fx.tokens.all}x`)],
  ['a revoked PAT', () => bearer(fx.tokens.revoked)],
  ['an expired PAT', () => bearer(expiredPat)],
  ['a session token signed with another secret', () => bearer(signJwt(HS256, ownerClaims(), randomBytes(32)))],
  ['an expired session token signed with another secret', () =>
    bearer(signJwt(HS256, sessionClaims({ userId: demoUsers.owner.id, workspaceId: fx.workspaceId, lifetimeSeconds: -3600 }), randomBytes(32)))],
  ['a session token with alg none', () => bearer(signJwt({ alg: 'none', typ: 'JWT' }, ownerClaims(), null))],
  ['a session token signed HS512 with the right secret', () => bearer(signJwt({ alg: 'HS512', typ: 'JWT' }, ownerClaims(), t.sessionSecret, 'sha512'))],
  ['a session token whose claims were altered after signing', () => {
    const [header, , signature] = fx.tokens.memberSession.split('.');
    const claims = Buffer.from(JSON.stringify(ownerClaims())).toString('base64url');
    return bearer(`${header}.${claims}.${signature}`);
  }],
  ['a session token for another audience', () => bearer(signJwt(HS256, { ...ownerClaims(), aud: 'portfolio' }, t.sessionSecret))],
  ['a session token of a user of another workspace, claiming this one', () =>
    bearer(makeSession(t.sessionSecret, { userId: demoUsers.otherOwner.id, workspaceId: fx.workspaceId }))],
  ['a session token of a user that does not exist', () =>
    bearer(makeSession(t.sessionSecret, { userId: 'usr_nobodyAtAll', workspaceId: fx.workspaceId }))],
];

describe.each(authenticated)('$operationId ($method $template)', (operation) => {
  it.each(unauthenticatedCases)('answers 401 unauthenticated for %s', async (_case, headers) => {
    const response = await call(operation, headers());
    expectProblem(response, 401, 'unauthenticated');
    expect(response.headers['www-authenticate']).toMatch(/^Bearer /);
    // Nothing was counted: an unauthenticated call has no workspace.
    expect(response.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('answers 401 token-expired for a session token that has only expired', async () => {
    expectProblem(await call(operation, bearer(fx.tokens.expiredSession)), 401, 'token-expired');
  });

  it('checks the token before the parameters and the body', async () => {
    const path = operation.isList ? `${operation.examplePath}?limit=abc` : operation.examplePath;
    const response = await client.request(operation.method, path, {
      headers: { 'content-type': 'application/json' },
      body: operation.hasRequestBody ? '{not json' : undefined,
    });
    expectProblem(response, 401, 'unauthenticated');
  });

  it('declares its scopes in x-required-scopes', () => {
    expect(operation.requiredScopes.length).toBeGreaterThan(0);
    expect(operation.requiredScopes.every((scope) => (scopeCatalogue as readonly string[]).includes(scope))).toBe(true);
  });

  it.each(operation.requiredScopes)('answers 403 insufficient-scope to a PAT with every scope but %s', async (missing) => {
    const granted = scopeCatalogue.filter((scope) => scope !== missing);
    const response = await call(operation, bearer(await makePat(t.store, fx.workspaceId, granted)));
    const problem = expectProblem(response, 403, 'insufficient-scope');
    expect(problem.requiredScopes).toEqual(operation.requiredScopes);
    expect(problem.grantedScopes).toEqual(granted);
  });

  it.each(operation.requiredScopes)('answers 403 insufficient-scope to an OAuth access token granting every scope but %s', async (missing) => {
    const problem = expectProblem(await call(operation, bearer(oauthWithout[missing]!)), 403, 'insufficient-scope');
    expect(problem.requiredScopes).toEqual(operation.requiredScopes);
    expect(problem.grantedScopes).toEqual(scopeCatalogue.filter((scope) => scope !== missing));
  });

  it('admits a PAT holding exactly x-required-scopes', async () => {
    const response = await call(operation, bearer(await makePat(t.store, fx.workspaceId, operation.requiredScopes)));
    expect(response.status, response.text).not.toBe(401);
    expect(response.status, response.text).not.toBe(403);
  });

  it('answers 403 insufficient-scope to a PAT without scopes, listing none granted', async () => {
    const problem = expectProblem(await call(operation, bearer(ownerWithoutScopes)), 403, 'insufficient-scope');
    expect(problem.requiredScopes).toEqual(operation.requiredScopes);
    expect(problem.grantedScopes).toEqual([]);
  });

  // Roles (x-role-scopes, x-required-roles): the roles that may call are exactly those holding every required scope.
  const allowedRoles = (operation.requiredRoles.length > 0 ? operation.requiredRoles : roles) as readonly Role[];
  const refusedRoles = roles.filter((role) => !allowedRoles.includes(role));

  it('declares in x-required-roles exactly the roles whose scopes cover x-required-scopes (none: every role)', () => {
    const holding = roles.filter((role) => operation.requiredScopes.every((scope) => (roleScopes[role] as readonly string[]).includes(scope)));
    expect([...allowedRoles].sort()).toEqual([...holding].sort());
  });

  it.each(refusedRoles)('answers 403 insufficient-role to a %s, by session, by PAT, and by a PAT minted before a change of role', async (role) => {
    for (const token of [asRole[role].session, asRole[role].pat, changedTo[role]]) {
      const problem = expectProblem(await call(operation, bearer(token)), 403, 'insufficient-role');
      expect(problem.requiredRoles).toEqual(allowedRoles);
      expect(problem.heldRoles).toEqual([role]);
    }
  });

  it.each(allowedRoles)('admits a %s by session and by a PAT of its scopes, and a PAT whose user was given that role', async (role) => {
    for (const token of [asRole[role].session, asRole[role].pat, changedTo[role]]) {
      const response = await call(operation, bearer(token));
      expect(response.status, response.text).not.toBe(401);
      expect(response.status, response.text).not.toBe(403);
    }
  });

  it('answers 403 forbidden to a blocked Origin, before looking at the token', async () => {
    const response = await call(operation, { ...bearer(fx.tokens.all), origin: BLOCKED_ORIGIN });
    expectProblem(response, 403, 'forbidden', 'origin-not-allowed');
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
    expect(response.headers['x-ratelimit-limit']).toBeUndefined();
  });
});

describe.each(operations)('$operationId ($method $template) and CORS', (operation) => {
  it('answers a preflight from a blocked Origin with 403 forbidden', async () => {
    const response = await client.request('OPTIONS', operation.examplePath, {
      headers: { origin: BLOCKED_ORIGIN, 'access-control-request-method': operation.method },
    });
    expectProblem(response, 403, 'forbidden', 'origin-not-allowed');
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('answers a preflight from the allowed origin with 204, the CORS headers and x-request-id', async () => {
    const response = await client.request('OPTIONS', operation.examplePath, {
      headers: { origin: fx.allowedOrigin, 'access-control-request-method': operation.method, 'access-control-request-headers': 'authorization, content-type, if-match, idempotency-key' },
    });
    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    expect(response.headers['x-request-id']).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
    expect(response.headers['access-control-allow-origin']).toBe(fx.allowedOrigin);
    expect(response.headers['access-control-allow-methods']?.split(/,\s*/)).toContain(operation.method);
    expect(response.headers['access-control-allow-headers']?.toLowerCase().split(/,\s*/)).toEqual(
      expect.arrayContaining(['authorization', 'content-type', 'if-match', 'idempotency-key']),
    );
  });

  it('gives the allowed origin Access-Control-Allow-Origin and the exposed headers', async () => {
    const response = await client.request(operation.method, operation.isList ? `${operation.examplePath}?limit=1` : operation.examplePath, {
      headers: { ...bearer(fx.tokens.readOnly), origin: fx.allowedOrigin },
    });
    expect(response.headers['access-control-allow-origin']).toBe(fx.allowedOrigin);
    expect(response.headers['access-control-allow-credentials']).toBeUndefined();
    expect(response.headers['access-control-expose-headers']?.toLowerCase().split(/,\s*/)).toEqual(expect.arrayContaining(EXPOSED_HEADERS));
  });
});

describe.each(publicOperations)('$operationId ($method $template), public', (operation) => {
  it('answers 200 without a token, uncounted', async () => {
    const response = await call(operation, {});
    expect(response.status).toBe(200);
    expect(response.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('answers 403 forbidden to a blocked Origin', async () => {
    expectProblem(await call(operation, { origin: BLOCKED_ORIGIN }), 403, 'forbidden', 'origin-not-allowed');
  });
});

describe.each(byId)("$operationId ($method $template) with another workspace's ids", (operation) => {
  const otherIdOf = (name: string) => otherWorkspaceIdOf(name);
  // Never issued, same shape and length as the other workspace's ids.
  const missingIdOf = (name: string) => `${resourceOf(name).prefix}_${'Z'.repeat(otherIdOf(name).length - resourceOf(name).prefix.length - 1)}`;
  const pathWith = (idOf: (name: string) => string) =>
    operation.pathParameters.reduce((path, name) => path.replace(`{${name}}`, idOf(name)), operation.template);

  it('answers 404 exactly as for a missing id (only the request id and the id itself differ), and changes nothing', async () => {
    const foreign = await call(operation, bearer(fx.tokens.all), pathWith(otherIdOf));
    const missing = await call(operation, bearer(fx.tokens.all), pathWith(missingIdOf));
    const foreignProblem = expectProblem(foreign, 404, 'not-found');
    const missingProblem = expectProblem(missing, 404, 'not-found');
    expect(foreignProblem.code).toMatch(/^[a-z]+(-[a-z]+)*-not-found$/);
    const normalize = (text: string, requestId: string, idOf: (name: string) => string) =>
      withPlaceholders(text, {
        [requestId]: '<request id>',
        ...Object.fromEntries(operation.pathParameters.map((name) => [idOf(name), `<${name}>`])),
      });
    expect(normalize(foreign.text, foreignProblem.requestId, otherIdOf)).toBe(normalize(missing.text, missingProblem.requestId, missingIdOf));
    expect(Object.keys(foreign.headers).sort()).toEqual(Object.keys(missing.headers).sort());

    // The other workspace still has its resource, untouched.
    for (const name of operation.pathParameters) {
      const own = await client.get(resourceOf(name).reader.template.replace(`{${name}}`, otherIdOf(name)), bearer(fx.otherWorkspace.token));
      expect(own.status).toBe(200);
      expect(own.body.version).toBe(1);
    }
  });
});

/** Every path of the contract once, with the methods it declares and one it does not. */
const HTTP_METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH'];
const paths = [...new Map(operations.map((operation) => [operation.template, operation.examplePath])).entries()].map(([template, examplePath]) => {
  const declared = operations.filter((operation) => operation.template === template).map((operation) => operation.method.toUpperCase());
  return { template, examplePath, declared, undeclared: HTTP_METHODS.find((method) => !declared.includes(method))! };
});

const contract = new ResponseContract(loadContractDocument('work-platform'));

describe.each(paths)('$template', ({ template, examplePath, declared, undeclared }) => {
  it(`answers a method it does not declare with a 405 problem and Allow naming the ones it does`, async () => {
    const response = await client.request(undeclared, examplePath, { headers: bearer(fx.tokens.all) });
    expectProblem(response, 405, 'method-not-allowed');
    expect(response.headers['allow']?.split(/,\s*/).sort()).toEqual([...declared].sort());
    // The 405 the build adds to every operation of the path (x-conventions) is this answer.
    for (const operation of operations.filter((candidate) => candidate.template === template)) expect(contract.check(operation.operationId, response)).toEqual([]);
  });
});

describe('problems outside any operation', () => {
  it('answers an unknown route with a 404 problem', async () => {
    expectProblem(await client.get('/v1/no-such-thing', bearer(fx.tokens.all)), 404, 'not-found');
  });

  it('echoes a valid client x-request-id in the header and the problem', async () => {
    const response = await client.get('/v1/tasks', { 'x-request-id': 'trace-42.a:b' });
    expect(response.headers['x-request-id']).toBe('trace-42.a:b');
    expect(expectProblem(response, 401, 'unauthenticated').requestId).toBe('trace-42.a:b');
  });

  // The body is read only after the CORS check, and an oversized upload is drained so the client reads the 413.
  it('answers an oversized body with a 413 problem carrying the CORS headers, and a blocked origin with 403', async () => {
    const body = JSON.stringify({ projectId: fx.projectId, title: 'x', padding: 'p'.repeat(1024 * 1024) });
    const allowed = await client.request('POST', '/v1/tasks', { headers: { ...bearer(fx.tokens.all), 'content-type': 'application/json', origin: fx.allowedOrigin }, body });
    expectProblem(allowed, 413, 'payload-too-large');
    expect(allowed.headers['access-control-allow-origin']).toBe(fx.allowedOrigin);
    const blocked = await client.request('POST', '/v1/tasks', { headers: { ...bearer(fx.tokens.all), 'content-type': 'application/json', origin: BLOCKED_ORIGIN }, body });
    expectProblem(blocked, 403, 'forbidden', 'origin-not-allowed');
  });

  // The body is read only after the caller is authenticated and admitted: a caller without a token never costs an upload.
  it('answers an oversized upload 413 with a token and 401 without one (the body unread), and serves the next call', async () => {
    for (const [size, headers, status, slug] of [
      [1.05, bearer(fx.tokens.all), 413, 'payload-too-large'],
      [2, {}, 401, 'unauthenticated'],
      [4, bearer(fx.tokens.all), 413, 'payload-too-large'],
      [8, {}, 401, 'unauthenticated'],
    ] as const) {
      const body = JSON.stringify({ padding: 'p'.repeat(size * 1024 * 1024) });
      const response = await client.request('POST', '/v1/projects', { headers: { ...headers, 'content-type': 'application/json' }, body });
      expectProblem(response, status, slug);
    }
    expect((await client.get('/v1/projects?limit=1', bearer(fx.tokens.all))).status).toBe(200);
  });

  it('replaces an invalid client x-request-id with its own', async () => {
    const response = await client.get('/v1/tasks', { 'x-request-id': 'not valid!' });
    expect(response.headers['x-request-id']).not.toBe('not valid!');
    expectProblem(response, 401, 'unauthenticated');
  });
});

describe('secrets', () => {
  it('never writes a token to the log', async () => {
    await client.get('/v1/tasks?limit=1', bearer(fx.tokens.all));
    await client.get('/v1/tasks?limit=1', bearer(fx.tokens.session));
    const log = t.logLines.join('\n');
    for (const token of [fx.tokens.all, fx.tokens.session, fx.tokens.revoked]) expect(log).not.toContain(token);
  });

  it('stores PATs only as hashes', async () => {
    const rows = await t.sql.rows('SELECT * FROM personal_access_tokens');
    expect(rows.length).toBeGreaterThan(0);
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain(fx.tokens.all.slice('svc_pat_'.length));
  });
});

it('covers every operation of the contract: each path parameter names a resource the contract reads, and the demo has one in another workspace', () => {
  expect(operations.length).toBeGreaterThanOrEqual(15);
  expect(authenticated.length).toBeGreaterThanOrEqual(11);
  const names = [...new Set(byId.flatMap((operation) => operation.pathParameters))];
  expect(names.length).toBeGreaterThanOrEqual(8);
  for (const name of names) {
    expect(resourceOf(name).reader.operationId, name).toMatch(/^get/);
    expect(otherWorkspaceIdOf(name), `the demo's other workspace names no ${name} (src/demo/workPlatformDemo.ts)`).toMatch(new RegExp(`^${resourceOf(name).prefix}_`));
  }
});
