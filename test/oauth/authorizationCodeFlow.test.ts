// The authorization code flow with PKCE, driven by a third-party client library (oauth4webapi)
// against the running server over real HTTP: discovery, consent, code exchange, /v1 calls,
// refresh rotation with reuse detection, revocation and introspection, and the ways a token
// stops working (client deleted, user removed).
import * as oauth from 'oauth4webapi';
import { beforeAll, describe, expect, it } from 'vitest';
import { scopeCatalogue } from '../../generated/work-platform/rules.js';
import { createOauthClientStore } from '../../src/store/oauthClients.js';
import { createUserStore } from '../../src/store/users.js';
import type { ContractClient } from '../support/contractClient.js';
import {
  approve,
  authorizationRequest,
  authorizeAndExchange,
  discover,
  insecure,
  offeredScopes,
  openConsentPage,
  registerTestClient,
  TestBrowser,
  TEST_REDIRECT_URI,
  type RegisteredClient,
  exchangeCode,
} from '../support/oauth.js';
import { useTestApp, type TestApp } from '../support/testApp.js';
import { expectProblem, makeSession, makeTestWorkspace, type TestWorkspace } from '../support/workPlatform.js';

let t: TestApp;
let client: ContractClient;
let ws: TestWorkspace;
let as: oauth.AuthorizationServer;
let publicClient: RegisteredClient;
let confidentialClient: RegisteredClient;

useTestApp((app) => {
  t = app;
  client = app.workPlatformClient;
});

beforeAll(async () => {
  ws = await makeTestWorkspace(t.db, t.sessionSecret, { plan: 'free' });
  publicClient = await registerTestClient(t.db, { workspaceId: ws.workspaceId, scopes: ['tasks:read', 'tasks:write', 'projects:read'], name: 'Public test client' });
  confidentialClient = await registerTestClient(t.db, { workspaceId: ws.workspaceId, scopes: ['tasks:read', 'tasks:write'], confidential: true, name: 'Confidential test client' });
  as = await discover(t.app.publicBaseUrl);
});

const tasksWith = (accessToken: string) => client.get('/v1/tasks?limit=1', { authorization: `Bearer ${accessToken}` });

async function oauthError(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof oauth.ResponseBodyError) return error.error;
    if (error instanceof oauth.AuthorizationResponseError) return error.error;
    throw error;
  }
  throw new Error('expected an OAuth error');
}

describe('discovery (RFC 8414) and protected-resource metadata (RFC 9728)', () => {
  it('names the issuer (the public origin), endpoints under /oauth, S256 only, code only, and the scope catalogue', () => {
    const origin = new URL(t.app.publicBaseUrl).origin;
    expect(as.issuer).toBe(origin);
    expect(as.authorization_endpoint).toBe(`${origin}/oauth/authorize`);
    expect(as.token_endpoint).toBe(`${origin}/oauth/token`);
    expect(as.introspection_endpoint).toBe(`${origin}/oauth/introspect`);
    expect(as.revocation_endpoint).toBe(`${origin}/oauth/revoke`);
    expect(as.code_challenge_methods_supported).toEqual(['S256']);
    expect(as.response_types_supported).toEqual(['code']);
    expect(as.grant_types_supported).toEqual(['authorization_code', 'refresh_token']);
    expect(as.scopes_supported).toEqual([...scopeCatalogue]);
    expect(as.authorization_response_iss_parameter_supported).toBe(true);
  });

  it('keeps the issuer whatever Host the client sent, and serves the resource metadata', async () => {
    const spoofed = await fetch(`${t.app.url}/.well-known/oauth-authorization-server`, { headers: { host: 'evil.example', 'x-forwarded-host': 'evil.example' } });
    expect((await spoofed.json()).token_endpoint).toBe(as.token_endpoint);
    const resource = await fetch(`${t.app.url}/.well-known/oauth-protected-resource`);
    expect(resource.status).toBe(200);
    expect(await resource.json()).toMatchObject({ resource: `${t.app.publicBaseUrl}/v1`, authorization_servers: [as.issuer], scopes_supported: [...scopeCatalogue] });
    expect((await fetch(`${t.app.url}/oauth/.well-known/openid-configuration`)).status).toBe(404);
  });

  it('declares the oauth2 scheme with the authorization code flow on the served contract, on this server', async () => {
    const served = (await (await fetch(`${t.app.url}/v1/openapi.json`)).json()) as any;
    const flow = served.components.securitySchemes.oauth2.flows.authorizationCode;
    expect(flow).toMatchObject({ authorizationUrl: as.authorization_endpoint, tokenUrl: as.token_endpoint, refreshUrl: as.token_endpoint });
    expect(Object.keys(flow.scopes)).toEqual([...scopeCatalogue]);
    expect(served.paths['/v1/tasks'].get.security).toEqual([{ bearerAuth: [] }, { oauth2: ['tasks:read'] }]);
  });
});

describe('the whole flow: authorize → token → /v1 → refresh → reuse → revoke → introspect', () => {
  it('runs with a confidential client', async () => {
    const browser = new TestBrowser();
    const request = await authorizationRequest(as, confidentialClient.id, 'tasks:read tasks:write');
    const consent = await openConsentPage(browser, request.url, ws.session);
    expect(consent.status, consent.html.slice(0, 300)).toBe(200);
    expect(offeredScopes(consent.html)).toEqual(['tasks:read', 'tasks:write']);
    // The application session is an HttpOnly cookie for /oauth only.
    expect(browser.cookie('oauth_app_session')).toBe(ws.session);

    const landed = await approve(browser, consent, ['tasks:read', 'tasks:write']);
    const callback = new URL(landed.url);
    expect(`${callback.origin}${callback.pathname}`).toBe(TEST_REDIRECT_URI);
    expect(callback.searchParams.get('state')).toBe(request.state);
    expect(callback.searchParams.get('iss')).toBe(as.issuer);
    const tokens = await exchangeCode(as, confidentialClient, callback, request);
    expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: 900, scope: 'tasks:read tasks:write' });
    expect(tokens.access_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(tokens.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(tokens.id_token).toBeUndefined();

    const listed = await tasksWith(tokens.access_token);
    expect(listed.status, listed.text).toBe(200);
    const created = await client.request('POST', '/v1/tasks', {
      headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ projectId: ws.projectId, title: 'Made with an OAuth token' }),
    });
    expect(created.status, created.text).toBe(201);

    // Refresh rotates the refresh token; the earlier access token stays valid until it expires.
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      confidentialClient.client,
      await oauth.refreshTokenGrantRequest(as, confidentialClient.client, confidentialClient.auth, tokens.refresh_token!, insecure),
    );
    expect(refreshed.refresh_token).toBeDefined();
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(refreshed.scope).toBe('tasks:read tasks:write');
    expect((await tasksWith(refreshed.access_token)).status).toBe(200);
    expect((await tasksWith(tokens.access_token)).status).toBe(200);

    // Presenting the rotated (used) refresh token again revokes the whole family.
    const reuse = oauth.refreshTokenGrantRequest(as, confidentialClient.client, confidentialClient.auth, tokens.refresh_token!, insecure);
    expect(await oauthError(reuse.then((response) => oauth.processRefreshTokenResponse(as, confidentialClient.client, response)))).toBe('invalid_grant');
    expectProblem(await tasksWith(refreshed.access_token), 401, 'unauthenticated');
    expectProblem(await tasksWith(tokens.access_token), 401, 'unauthenticated');
    const newest = oauth.refreshTokenGrantRequest(as, confidentialClient.client, confidentialClient.auth, refreshed.refresh_token!, insecure);
    expect(await oauthError(newest.then((response) => oauth.processRefreshTokenResponse(as, confidentialClient.client, response)))).toBe('invalid_grant');

    // A new authorization; revoking its access token, then introspection says inactive.
    const again = await authorizeAndExchange(as, confidentialClient, { browser, sessionToken: ws.session, scope: 'tasks:read' });
    const before = await oauth.processIntrospectionResponse(
      as,
      confidentialClient.client,
      await oauth.introspectionRequest(as, confidentialClient.client, confidentialClient.auth, again.access_token, insecure),
    );
    expect(before).toMatchObject({ active: true, client_id: confidentialClient.id, sub: ws.ownerId, scope: 'tasks:read', aud: `${t.app.publicBaseUrl}/v1`, iss: as.issuer });
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, confidentialClient.client, confidentialClient.auth, again.access_token, insecure));
    const after = await oauth.processIntrospectionResponse(
      as,
      confidentialClient.client,
      await oauth.introspectionRequest(as, confidentialClient.client, confidentialClient.auth, again.access_token, insecure),
    );
    expect(after).toEqual({ active: false });
    expectProblem(await tasksWith(again.access_token), 401, 'unauthenticated');
    // Revoking an access token revokes its whole authorization, the refresh token too (documented).
    const refreshAfterRevoke = await oauth.introspectionRequest(as, confidentialClient.client, confidentialClient.auth, again.refresh_token!, insecure);
    expect(await oauth.processIntrospectionResponse(as, confidentialClient.client, refreshAfterRevoke)).toEqual({ active: false });
  });

  it('lets a confidential client authenticate with client_secret_post as well as client_secret_basic', async () => {
    const byPost = { ...confidentialClient, auth: oauth.ClientSecretPost(confidentialClient.secret!) };
    const tokens = await authorizeAndExchange(as, byPost, { sessionToken: ws.session, scope: 'tasks:read' });
    expect((await tasksWith(tokens.access_token)).status).toBe(200);
  });

  it('runs with a public client (PKCE only), and its refresh token revoked by revocation', async () => {
    const tokens = await authorizeAndExchange(as, publicClient, { sessionToken: ws.session, scope: 'tasks:read' });
    expect((await tasksWith(tokens.access_token)).status).toBe(200);
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, publicClient.client, publicClient.auth, tokens.refresh_token!, insecure));
    expectProblem(await tasksWith(tokens.access_token), 401, 'unauthenticated');
    const introspected = await oauth.introspectionRequest(as, publicClient.client, publicClient.auth, tokens.access_token, insecure);
    expect(await oauth.processIntrospectionResponse(as, publicClient.client, introspected)).toEqual({ active: false });
  });
});

describe('consent and the application session', () => {
  it('remembers consent after an access token is revoked, and forgets it after a refresh token is revoked', async () => {
    const browser = new TestBrowser();
    const first = await authorizeAndExchange(as, publicClient, { browser, sessionToken: ws.session, scope: 'tasks:read' });
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, publicClient.client, publicClient.auth, first.access_token, insecure));
    const silent = await browser.follow((await authorizationRequest(as, publicClient.id, 'tasks:read')).url, TEST_REDIRECT_URI);
    expect(silent.url.startsWith(TEST_REDIRECT_URI), silent.url).toBe(true);
    expect(new URL(silent.url).searchParams.get('code')).toBeTruthy();

    const second = await authorizeAndExchange(as, publicClient, { browser, sessionToken: ws.session, scope: 'tasks:read' });
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, publicClient.client, publicClient.auth, second.refresh_token!, insecure));
    const asked = await browser.follow((await authorizationRequest(as, publicClient.id, 'tasks:read')).url, TEST_REDIRECT_URI);
    expect(asked.url, asked.url).toMatch(/\/oauth\/interaction\//);
    expect(offeredScopes(asked.html)).toEqual(['tasks:read']);
  });

  it('sends the user back to sign-in when the application session was revoked, and refuses a PAT as a session', async () => {
    const users = createUserStore(t.db);
    const { id: userId } = await users.createUser({ workspaceId: ws.workspaceId, role: 'member' });
    const browser = new TestBrowser();
    await authorizeAndExchange(as, publicClient, { browser, sessionToken: makeSession(t.sessionSecret, { userId, workspaceId: ws.workspaceId, now: Date.now() - 2000 }), scope: 'tasks:read' });
    await users.revokeSessions(userId);
    const again = await browser.follow((await authorizationRequest(as, publicClient.id, 'tasks:read')).url, TEST_REDIRECT_URI);
    expect(again.url).toMatch(/\/oauth\/sign-in\?return_to=%2Foauth%2Finteraction%2F/);

    const { hiddenField } = await import('../support/oauth.js');
    const refused = await browser.submit(again, [['csrf', hiddenField(again.html, 'csrf')], ['return_to', hiddenField(again.html, 'return_to')], ['session_token', ws.pat]], TEST_REDIRECT_URI);
    expect(refused.status).toBe(401);
    expect(refused.html).toContain('not a valid session token');
    const noCsrf = await browser.submit(again, [['return_to', hiddenField(again.html, 'return_to')], ['session_token', ws.session]], TEST_REDIRECT_URI);
    expect(noCsrf.status).toBe(403);
  });
});

describe('the authorization request and the code', () => {
  it('a code works once; the second exchange answers invalid_grant and revokes what the first issued', async () => {
    const browser = new TestBrowser();
    const request = await authorizationRequest(as, publicClient.id, 'tasks:read');
    const landed = await approve(browser, await openConsentPage(browser, request.url, ws.session), ['tasks:read']);
    const params = oauth.validateAuthResponse(as, publicClient.client, new URL(landed.url), request.state);
    const exchange = () => oauth.authorizationCodeGrantRequest(as, publicClient.client, publicClient.auth, params, TEST_REDIRECT_URI, request.verifier, insecure);
    const tokens = await oauth.processAuthorizationCodeResponse(as, publicClient.client, await exchange());
    expect((await tasksWith(tokens.access_token)).status).toBe(200);
    const second = await exchange();
    expect(second.status).toBe(400);
    expect(await second.json()).toMatchObject({ error: 'invalid_grant' });
    expectProblem(await tasksWith(tokens.access_token), 401, 'unauthenticated');
  });

  it('refuses a plain PKCE challenge, a request without one, and a wrong verifier', async () => {
    const browser = new TestBrowser();
    for (const extra of [{ code_challenge_method: 'plain', code_challenge: 'x'.repeat(43) }, { code_challenge: '', code_challenge_method: '' }]) {
      const request = await authorizationRequest(as, publicClient.id, 'tasks:read', extra);
      const landed = await browser.follow(request.url, TEST_REDIRECT_URI);
      const answer = new URL(landed.url).searchParams;
      expect(answer.get('error'), landed.url).toBe('invalid_request');
      expect(answer.get('state')).toBe(request.state);
      expect(answer.get('code')).toBeNull();
    }
    const request = await authorizationRequest(as, publicClient.id, 'tasks:read');
    const landed = await approve(browser, await openConsentPage(browser, request.url, ws.session), ['tasks:read']);
    const params = oauth.validateAuthResponse(as, publicClient.client, new URL(landed.url), request.state);
    const wrongVerifier = await oauth.authorizationCodeGrantRequest(as, publicClient.client, publicClient.auth, params, TEST_REDIRECT_URI, oauth.generateRandomCodeVerifier(), insecure);
    expect(wrongVerifier.status).toBe(400);
    expect(await wrongVerifier.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('refuses a redirect URI that is not registered exactly, without redirecting to it', async () => {
    for (const redirectUri of [`${TEST_REDIRECT_URI}/extra`, TEST_REDIRECT_URI.replace('8976', '8977'), `${TEST_REDIRECT_URI}?x=1`, 'https://evil.example/callback']) {
      const request = await authorizationRequest(as, publicClient.id, 'tasks:read', { redirect_uri: redirectUri });
      const response = await fetch(request.url, { redirect: 'manual', headers: { accept: 'text/html' } });
      expect(response.status, redirectUri).toBe(400);
      expect(response.headers.get('location')).toBeNull();
      const html = await response.text();
      expect(html).toContain('invalid_redirect_uri');
      expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
    }
  });

  it('grants only the scopes the user left ticked, and /v1 enforces them like a PAT (403 with requiredScopes and grantedScopes)', async () => {
    const browser = new TestBrowser();
    const request = await authorizationRequest(as, publicClient.id, 'tasks:read tasks:write projects:read webhooks:manage unknown:scope');
    const consent = await openConsentPage(browser, request.url, ws.session);
    // Only the scopes the client is registered for are offered.
    expect(offeredScopes(consent.html)).toEqual(['tasks:read', 'tasks:write', 'projects:read']);
    const landed = await approve(browser, consent, ['tasks:read', 'projects:read']);
    const tokens = await exchangeCode(as, publicClient, new URL(landed.url), request);
    expect(tokens.scope).toBe('tasks:read projects:read');
    expect((await tasksWith(tokens.access_token)).status).toBe(200);
    const write = await client.request('POST', '/v1/tasks', {
      headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ projectId: ws.projectId, title: 'Not allowed' }),
    });
    const problem = expectProblem(write, 403, 'insufficient-scope');
    expect(problem.requiredScopes).toEqual(['tasks:write']);
    expect(problem.grantedScopes).toEqual(['tasks:read', 'projects:read']);
    // A refresh cannot widen what was granted.
    const widened = await oauth.refreshTokenGrantRequest(as, publicClient.client, publicClient.auth, tokens.refresh_token!, { ...insecure, additionalParameters: { scope: 'tasks:read tasks:write' } });
    expect(widened.status).toBe(400);
    expect(await widened.json()).toMatchObject({ error: 'invalid_scope' });
  });

  it('answers access_denied with the state when the user denies', async () => {
    const browser = new TestBrowser();
    const request = await authorizationRequest(as, publicClient.id, 'tasks:read');
    const consent = await openConsentPage(browser, request.url, ws.session);
    const { hiddenField } = await import('../support/oauth.js');
    const landed = await browser.submit(consent, [['csrf', hiddenField(consent.html, 'csrf')], ['decision', 'deny']], TEST_REDIRECT_URI);
    const answer = new URL(landed.url).searchParams;
    expect(answer.get('error')).toBe('access_denied');
    expect(answer.get('state')).toBe(request.state);
    expect(answer.get('code')).toBeNull();
  });

  it('lets only users of the client\'s workspace authorize it', async () => {
    const other = await makeTestWorkspace(t.db, t.sessionSecret, { name: 'Another workspace' });
    const browser = new TestBrowser();
    const request = await authorizationRequest(as, publicClient.id, 'tasks:read');
    const page = await openConsentPage(browser, request.url, other.session);
    expect(page.status).toBe(200);
    expect(page.html).toContain('belongs to another workspace');
    expect(offeredScopes(page.html)).toEqual([]);
    const { hiddenField } = await import('../support/oauth.js');
    const landed = await browser.submit(page, [['csrf', hiddenField(page.html, 'csrf')], ['decision', 'allow'], ['scope', 'tasks:read']], TEST_REDIRECT_URI);
    expect(new URL(landed.url).searchParams.get('error')).toBe('access_denied');
  });
});

describe('when OAuth tokens stop working, and what they count toward', () => {
  it('stops every token of a client at once when the client is deleted (the token endpoint refuses it too)', async () => {
    const doomed = await registerTestClient(t.db, { workspaceId: ws.workspaceId, scopes: ['tasks:read'], confidential: true });
    const tokens = await authorizeAndExchange(as, doomed, { sessionToken: ws.session, scope: 'tasks:read' });
    expect((await tasksWith(tokens.access_token)).status).toBe(200);
    await createOauthClientStore(t.db).deleteOauthClient(doomed.id);
    expectProblem(await tasksWith(tokens.access_token), 401, 'unauthenticated');
    const refresh = await oauth.refreshTokenGrantRequest(as, doomed.client, doomed.auth, tokens.refresh_token!, insecure);
    expect(refresh.status).toBe(401);
    expect(await refresh.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('stops a user\'s tokens when the user is removed from the workspace', async () => {
    const users = createUserStore(t.db);
    const { id: userId } = await users.createUser({ workspaceId: ws.workspaceId, role: 'member', name: 'Leaving soon' });
    const session = makeSession(t.sessionSecret, { userId, workspaceId: ws.workspaceId });
    const tokens = await authorizeAndExchange(as, publicClient, { sessionToken: session, scope: 'tasks:read' });
    expect((await tasksWith(tokens.access_token)).status).toBe(200);
    await users.deleteUser(userId);
    expectProblem(await tasksWith(tokens.access_token), 401, 'unauthenticated');
    const refresh = await oauth.refreshTokenGrantRequest(as, publicClient.client, publicClient.auth, tokens.refresh_token!, insecure);
    expect(refresh.status).toBe(400);
    expect(await refresh.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('stops a user\'s tokens also when only the store row is gone (the join checks the user on every call)', async () => {
    const users = createUserStore(t.db);
    const { id: userId } = await users.createUser({ workspaceId: ws.workspaceId, role: 'member' });
    const tokens = await authorizeAndExchange(as, publicClient, { sessionToken: makeSession(t.sessionSecret, { userId, workspaceId: ws.workspaceId }), scope: 'tasks:read' });
    t.db.prepare('DELETE FROM users WHERE id = ?').run(userId);
    expectProblem(await tasksWith(tokens.access_token), 401, 'unauthenticated');
  });

  it('counts OAuth calls toward the monthly quota, as PAT calls do (session calls do not)', async () => {
    const tokens = await authorizeAndExchange(as, publicClient, { sessionToken: ws.session, scope: 'tasks:read' });
    const first = await tasksWith(tokens.access_token);
    const second = await tasksWith(tokens.access_token);
    expect(first.headers['x-quota-limit']).toBe('10000');
    expect(Number(second.headers['x-quota-remaining'])).toBe(Number(first.headers['x-quota-remaining']) - 1);
    const bySession = await client.get('/v1/tasks?limit=1', { authorization: `Bearer ${ws.session}` });
    expect(bySession.headers['x-quota-remaining']).toBeUndefined();
    const third = await tasksWith(tokens.access_token);
    expect(Number(third.headers['x-quota-remaining'])).toBe(Number(second.headers['x-quota-remaining']) - 1);
  });

  it('is tenant-scoped: another workspace\'s task answers 404', async () => {
    const tokens = await authorizeAndExchange(as, publicClient, { sessionToken: ws.session, scope: 'tasks:read' });
    const foreign = await client.get(`/v1/tasks/${t.fixture.workPlatform.otherWorkspace.taskId}`, { authorization: `Bearer ${tokens.access_token}` });
    expectProblem(foreign, 404, 'not-found');
  });

  it('never stores a raw token, code, session id or secret', async () => {
    const browser = new TestBrowser();
    const request = await authorizationRequest(as, confidentialClient.id, 'tasks:read');
    const landed = await approve(browser, await openConsentPage(browser, request.url, ws.session), ['tasks:read']);
    const tokens = await exchangeCode(as, confidentialClient, new URL(landed.url), request);
    const rows = JSON.stringify(t.db.prepare('SELECT * FROM oauth_records').all()) + JSON.stringify(t.db.prepare('SELECT * FROM oauth_clients').all());
    const serverSession = browser.cookie('oauth_session');
    expect(serverSession).toBeTruthy();
    for (const secret of [tokens.access_token, tokens.refresh_token!, new URL(landed.url).searchParams.get('code')!, serverSession!, confidentialClient.secret!, ws.session]) {
      expect(rows).not.toContain(secret);
    }
  });
});
