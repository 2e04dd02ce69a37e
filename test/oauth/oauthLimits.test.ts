// The authorization server's own limits (issue 28): requests per client address to the browser
// pages and to the token endpoints, counted before oidc-provider sees them (429 with Retry-After:
// a page, or RFC 6749's error JSON), and the authorizations in progress kept per client.
import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientAddress } from '../../src/http/clientAddress.js';
import { createOauthClientStore } from '../../src/store/oauthClients.js';
import { createOauthRecordStore, type OauthRecordInput } from '../../src/store/oauthRecords.js';
import { storeEngines, type OpenedEngine } from '../support/engines.js';
import { registerTestClient, TEST_REDIRECT_URI, TestBrowser, type RegisteredClient } from '../support/oauth.js';
import { useTestApp, type TestApp } from '../support/testApp.js';
import { makeTestWorkspace } from '../support/workPlatform.js';
import { makeClock } from '../store/factories.js';
import { makeWorkspace } from '../store/workPlatformFactories.js';
import { demoOauthClient } from '../../src/demo/workPlatformDemo.js';
import { makeDemoDatabaseFile, startServerProcess, stopServerProcesses, type DemoDatabaseFile, type ServerProcess } from '../support/serverProcess.js';

const requestFrom = (remoteAddress: string, forwardedFor?: string) =>
  ({ socket: { remoteAddress }, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } }) as unknown as IncomingMessage;

describe('the client address (TRUST_PROXY)', () => {
  it('is the connection\'s address without trusted proxies, whatever X-Forwarded-For says', () => {
    expect(clientAddress(requestFrom('10.0.0.5', '203.0.113.7'), 0)).toBe('10.0.0.5');
    expect(clientAddress(requestFrom('::ffff:127.0.0.1'), 0)).toBe('127.0.0.1');
  });

  it('is the entry the outermost trusted proxy wrote, not one the client sent', () => {
    // The client sent "1.2.3.4"; the one proxy appended the address it saw, 203.0.113.7.
    expect(clientAddress(requestFrom('10.0.0.5', '1.2.3.4, 203.0.113.7'), 1)).toBe('203.0.113.7');
    expect(clientAddress(requestFrom('10.0.0.5', '1.2.3.4, 203.0.113.7, 10.0.0.9'), 2)).toBe('203.0.113.7');
    // Fewer entries than proxies: the leftmost known.
    expect(clientAddress(requestFrom('10.0.0.5', '203.0.113.7'), 3)).toBe('203.0.113.7');
    // No header: the connection.
    expect(clientAddress(requestFrom('10.0.0.5'), 1)).toBe('10.0.0.5');
    // Not an address: the connection.
    expect(clientAddress(requestFrom('10.0.0.5', 'unknown'), 1)).toBe('10.0.0.5');
  });

  it('counts an IPv6 client by its /64', () => {
    expect(clientAddress(requestFrom('2001:db8:1:2:aaaa::1'), 0)).toBe('2001:db8:1:2::/64');
    expect(clientAddress(requestFrom('10.0.0.5', '2001:db8:1:2:bbbb::9'), 1)).toBe('2001:db8:1:2::/64');
  });
});

describe.each(storeEngines)('interactions kept per client ($name)', (engineCase) => {
  let opened: OpenedEngine;
  beforeAll(async () => {
    opened = await engineCase.open();
  });
  afterAll(() => opened?.close());

  it('keeps the ones that expire last, per client, and leaves every other record alone', async () => {
    const clock = makeClock();
    const { engine } = opened;
    const workspace = await makeWorkspace(engine);
    const clients = createOauthClientStore(engine);
    const newClient = async () =>
      (await clients.createOauthClient({ workspaceId: workspace.workspaceId, name: 'C', redirectUris: ['https://c.example/cb'], scopes: ['tasks:read'], secretHash: null })).id;
    const [busy, quiet] = [await newClient(), await newClient()];
    const records = createOauthRecordStore(engine, { now: clock.now });
    const interaction = (clientId: string, idHash: string, expiresAt: number): OauthRecordInput & { clientId: string } => ({
      model: 'Interaction', idHash, payload: '{}', grantId: null, clientId, accountId: null, uid: null, expiresAt,
    });
    await records.save({ model: 'AccessToken', idHash: 'token', payload: '{}', grantId: 'g', clientId: busy, accountId: null, uid: null, expiresAt: clock.now() + 1 });
    await records.saveInteraction(interaction(quiet, 'q1', clock.now() + 1), 3);
    for (let i = 1; i <= 5; i += 1) await records.saveInteraction(interaction(busy, `b${i}`, clock.now() + i * 1000), 3);
    // Saved again (oidc-provider saves an interaction at each step): still kept, nothing else dropped.
    await records.saveInteraction(interaction(busy, 'b3', clock.now() + 3000), 3);

    for (const kept of ['b3', 'b4', 'b5']) expect(await records.find('Interaction', kept)).toBeDefined();
    for (const dropped of ['b1', 'b2']) expect(await records.find('Interaction', dropped)).toBeUndefined();
    expect(await records.find('Interaction', 'q1')).toBeDefined();
    expect(await records.find('AccessToken', 'token')).toBeDefined();
  });
});

describe('/oauth limits per client address', () => {
  let t: TestApp;
  let client: RegisteredClient;
  // Frozen 1 s into a window: every request below is in the same window until the clock is moved.
  const clock = makeClock(Math.floor(Date.now() / 60_000) * 60_000 + 1_000);

  useTestApp(
    (app) => {
      t = app;
    },
    {
      now: clock.now,
      env: { OAUTH_PAGE_RATE_LIMIT: '5', OAUTH_TOKEN_RATE_LIMIT: '3', OAUTH_RATE_WINDOW_SECONDS: '60', TRUST_PROXY: '1', OAUTH_INTERACTIONS_PER_CLIENT: '3' },
    },
  );

  beforeAll(async () => {
    const workspace = await makeTestWorkspace(t.store, t.sessionSecret, { now: clock.now });
    client = await registerTestClient(t.store, { workspaceId: workspace.workspaceId, scopes: ['tasks:read'] });
  });

  const authorizeUrl = () =>
    `${t.app.url}/oauth/authorize?${new URLSearchParams({
      client_id: client.id,
      response_type: 'code',
      redirect_uri: TEST_REDIRECT_URI,
      scope: 'tasks:read',
      state: 's',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    })}`;
  /** One request as the proxy in front (TRUST_PROXY=1) forwards it for `address`. */
  const from = (address: string, url: string, init: RequestInit = {}) =>
    fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), 'x-forwarded-for': address } });
  const tokenCall = (address: string) =>
    from(address, `${t.app.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: client.id, grant_type: 'refresh_token', refresh_token: 'R'.repeat(43) }).toString(),
    });
  const interactionRows = async () =>
    Number(await t.sql.value("SELECT count(*) FROM oauth_records WHERE model = 'Interaction' AND client_id = ?", client.id));

  it('answers a browser flood from one address 429 with Retry-After and a page; another address goes on', async () => {
    const flooder = '203.0.113.7';
    for (let i = 0; i < 5; i += 1) {
      const started = await from(flooder, authorizeUrl());
      expect(started.status).toBe(303);
      expect(started.headers.get('location')).toMatch(/^\/oauth\/interaction\/[A-Za-z0-9_-]+$/);
    }
    const refused = await from(flooder, authorizeUrl());
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('59');
    expect(refused.headers.get('content-type')).toMatch(/^text\/html/);
    expect(refused.headers.get('cache-control')).toContain('no-store');
    expect(await refused.text()).toContain('Try again in 59 seconds');
    // The sign-in page counts against the same pages' limit.
    expect((await from(flooder, `${t.app.url}/oauth/sign-in`)).status).toBe(429);

    expect((await from('198.51.100.9', authorizeUrl())).status).toBe(303);
    expect((await from('198.51.100.9', `${t.app.url}/oauth/sign-in`)).status).toBe(200);
    // The metadata and the key set write nothing and are not limited.
    expect((await from(flooder, `${t.app.url}/oauth/jwks`)).status).toBe(200);
    // Bounded per client: 6 authorizations started, 3 kept.
    expect(await interactionRows()).toBe(3);
  });

  it('answers a token endpoint flood 429 with Retry-After in RFC 6749\'s error JSON, in a bucket of its own', async () => {
    const caller = '192.0.2.44';
    for (let i = 0; i < 3; i += 1) {
      const answered = await tokenCall(caller);
      expect(answered.status).toBe(400);
      expect(await answered.json()).toMatchObject({ error: 'invalid_grant' });
    }
    const refused = await tokenCall(caller);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('59');
    expect(refused.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await refused.json()).toEqual({ error: 'temporarily_unavailable', error_description: expect.stringMatching(/more than 3 requests in 60 seconds/) });
    // Its pages are counted apart.
    expect((await from(caller, authorizeUrl())).status).toBe(303);
  });

  it('admits the address again in the next window', async () => {
    expect((await from('203.0.113.7', authorizeUrl())).status).toBe(429);
    clock.advance(60_000);
    expect((await from('203.0.113.7', authorizeUrl())).status).toBe(303);
    expect((await tokenCall('192.0.2.44')).status).toBe(400);
  });

  it('drops the oldest authorization in progress of a client beyond the bound; its user is asked to start again', async () => {
    const first = new TestBrowser();
    const started = await first.request(authorizeUrl(), { headers: { 'x-forwarded-for': '198.51.100.20' } });
    expect(started.status).toBe(303);
    for (let i = 0; i < 3; i += 1) {
      // Each started a second later: the first is the oldest.
      clock.advance(1_000);
      expect((await from(`198.51.100.${30 + i}`, authorizeUrl())).status).toBe(303);
    }
    expect(await interactionRows()).toBe(3);
    const consent = await first.request(new URL(started.headers.get('location')!, t.app.url).href, { headers: { 'x-forwarded-for': '198.51.100.20' } });
    expect(consent.status).toBe(400);
    expect(await consent.text()).toContain('This authorization request has expired');
  });
});

describe('/oauth limits shared by two server processes on one database', () => {
  let database: DemoDatabaseFile;
  let servers: ServerProcess[];

  beforeAll(async () => {
    database = await makeDemoDatabaseFile('contract-api-oauth-limits-');
    // One window spans the whole test (real clocks in child processes).
    const env = { DATABASE_PATH: database.databasePath, WEBHOOK_WORKER: 'off', OAUTH_PAGE_RATE_LIMIT: '4', OAUTH_RATE_WINDOW_SECONDS: String(10 * 365 * 24 * 3600), TRUST_PROXY: '1' };
    servers = await Promise.all([startServerProcess(env), startServerProcess(env)]);
  }, 60_000);
  afterAll(async () => {
    if (servers) expect(await stopServerProcesses(servers.map((server) => server.child))).toEqual([0, 0]);
    database?.remove();
  });

  it('admit exactly the allowance of one address between them', async () => {
    const authorize = (server: ServerProcess) =>
      fetch(
        `${server.url}/oauth/authorize?${new URLSearchParams({
          client_id: demoOauthClient.id,
          response_type: 'code',
          redirect_uri: demoOauthClient.redirectUri,
          scope: 'tasks:read',
          code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
          code_challenge_method: 'S256',
        })}`,
        { redirect: 'manual', headers: { 'x-forwarded-for': '203.0.113.99' } },
      );
    const statuses: number[] = [];
    for (let i = 0; i < 8; i += 1) statuses.push((await authorize(servers[i % 2]!)).status);
    expect(statuses).toEqual([303, 303, 303, 303, 429, 429, 429, 429]);
  });
});
