// The user's role bounds an OAuth grant: the consent page offers only the scopes the role may hold
// (x-role-scopes), a forged approval of another scope grants nothing more, and a token's scopes in
// force follow its user's role at every call (a demotion counts at once).
import * as oauth from 'oauth4webapi';
import { beforeAll, describe, expect, it } from 'vitest';
import { createUserStore } from '../../src/store/users.js';
import type { ContractClient } from '../support/contractClient.js';
import { approve, authorizationRequest, authorizeAndExchange, discover, insecure, offeredScopes, openConsentPage, registerTestClient, TestBrowser, TEST_REDIRECT_URI, type RegisteredClient, exchangeCode } from '../support/oauth.js';
import { useTestApp, type TestApp } from '../support/testApp.js';
import { expectProblem, makeSession, makeTestWorkspace, type TestWorkspace } from '../support/workPlatform.js';

let t: TestApp;
let client: ContractClient;
let ws: TestWorkspace;
let as: oauth.AuthorizationServer;
let registered: RegisteredClient;
let memberSession: string;
let adminId: string;
let adminSession: string;

useTestApp((app) => {
  t = app;
  client = app.workPlatformClient;
});

beforeAll(async () => {
  ws = await makeTestWorkspace(t.db, t.sessionSecret, { plan: 'free' });
  registered = await registerTestClient(t.db, { workspaceId: ws.workspaceId, scopes: ['tasks:read', 'workspace:read', 'webhooks:manage'], name: 'Admin dashboard' });
  as = await discover(t.app.publicBaseUrl);
  const users = createUserStore(t.db);
  const { id: memberId } = await users.createUser({ workspaceId: ws.workspaceId, role: 'member', name: 'Member' });
  memberSession = makeSession(t.sessionSecret, { userId: memberId, workspaceId: ws.workspaceId, lifetimeSeconds: 3600 });
  ({ id: adminId } = await users.createUser({ workspaceId: ws.workspaceId, role: 'admin', name: 'Admin' }));
  adminSession = makeSession(t.sessionSecret, { userId: adminId, workspaceId: ws.workspaceId, lifetimeSeconds: 3600 });
});

const limitsWith = (accessToken: string) => client.get('/v1/workspace/limits', { authorization: `Bearer ${accessToken}` });

describe('OAuth grants bounded by the role', () => {
  it("offers a member only its role's scopes, and grants nothing beyond them when the form asks for more", async () => {
    const browser = new TestBrowser();
    const request = await authorizationRequest(as, registered.id, 'tasks:read workspace:read webhooks:manage');
    const consent = await openConsentPage(browser, request.url, memberSession);
    expect(offeredScopes(consent.html)).toEqual(['tasks:read']);
    // A forged form that ticks what was not offered.
    const landed = await approve(browser, consent, ['tasks:read', 'workspace:read', 'webhooks:manage']);
    expect(landed.url.startsWith(TEST_REDIRECT_URI), `${landed.status} ${landed.url} ${landed.html.slice(0, 400)}`).toBe(true);
    const tokens = await exchangeCode(as, registered, new URL(landed.url), request);
    expect(tokens.scope).toBe('tasks:read');
    const refused = expectProblem(await limitsWith(tokens.access_token), 403, 'insufficient-role');
    expect(refused).toMatchObject({ requiredRoles: ['owner', 'admin'], heldRoles: ['member'] });
  });

  it('answers access_denied when the member may grant none of the scopes asked for', async () => {
    const browser = new TestBrowser();
    const request = await authorizationRequest(as, registered.id, 'workspace:read webhooks:manage');
    const landed = await openConsentPage(browser, request.url, memberSession);
    expect(landed.url.startsWith(TEST_REDIRECT_URI)).toBe(true);
    const answer = new URL(landed.url).searchParams;
    expect(answer.get('error')).toBe('access_denied');
    expect(answer.get('error_description')).toContain('member');
    expect(answer.get('code')).toBeNull();
  });

  it("lets an admin grant admin scopes, whose token loses them at once when the admin is demoted, and regains them on promotion", async () => {
    const tokens = await authorizeAndExchange(as, registered, { sessionToken: adminSession, scope: 'tasks:read workspace:read' });
    expect(tokens.scope).toBe('tasks:read workspace:read');
    expect((await limitsWith(tokens.access_token)).status).toBe(200);
    const users = createUserStore(t.db);
    await users.setUserRole(adminId, 'member');
    expect(expectProblem(await limitsWith(tokens.access_token), 403, 'insufficient-role')).toMatchObject({ heldRoles: ['member'] });
    // What the member role holds still works.
    expect((await client.get('/v1/tasks?limit=1', { authorization: `Bearer ${tokens.access_token}` })).status).toBe(200);
    await users.setUserRole(adminId, 'admin');
    expect((await limitsWith(tokens.access_token)).status).toBe(200);
  });

  it('asks again, offering only what the role now holds, when a demoted user authorizes the same client from the same browser', async () => {
    const users = createUserStore(t.db);
    const { id: leadId } = await users.createUser({ workspaceId: ws.workspaceId, role: 'admin', name: 'Lead' });
    const leadSession = makeSession(t.sessionSecret, { userId: leadId, workspaceId: ws.workspaceId, lifetimeSeconds: 3600 });
    const browser = new TestBrowser();
    const first = await authorizeAndExchange(as, registered, { browser, sessionToken: leadSession, scope: 'tasks:read workspace:read' });
    expect(first.scope).toBe('tasks:read workspace:read');
    // The same browser again, still an admin: the grant is reused without a consent page.
    const again = await authorizationRequest(as, registered.id, 'tasks:read workspace:read');
    expect((await openConsentPage(browser, again.url, leadSession)).url.startsWith(TEST_REDIRECT_URI)).toBe(true);

    await users.setUserRole(leadId, 'member');
    const request = await authorizationRequest(as, registered.id, 'tasks:read workspace:read');
    const consent = await openConsentPage(browser, request.url, leadSession);
    expect(consent.url.startsWith(TEST_REDIRECT_URI), 'the old grant was reused without asking').toBe(false);
    expect(offeredScopes(consent.html)).toEqual(['tasks:read']);
    const landed = await approve(browser, consent, ['tasks:read']);
    const tokens = await exchangeCode(as, registered, new URL(landed.url), request);
    expect(tokens.scope).toBe('tasks:read');
  });
});
