import { describe, expect, it } from 'vitest';
import { connectorCalls, databaseBytes, useConnectorTestApp, type ConnectorTestApp } from '../support/connectors.js';
import { eventsAbout, expectProblem, expectSuccess } from '../support/workPlatform.js';

let app: ConnectorTestApp;
useConnectorTestApp((started) => (app = started));
const calls = connectorCalls(() => app);
const newConnector = async () => expectSuccess(await calls.create({ kind: 'github', name: 'To connect' }), 201) as { id: string };
const sealedOf = (id: string) => app.t.sql.value<string | null>('SELECT sealed_credential FROM connectors WHERE id = ?', id);

describe('PUT /v1/connectors/{connectorId}/connection', () => {
  it('checks the token with GET /user, stores it sealed and answers the connector connected, with the login, a hint and the announced expiry', async () => {
    const token = 'ghp_connectHappyPathToken0000000000001AbCd';
    app.github.announceExpiry(token, '2030-01-31 12:00:00 UTC');
    const { id } = await newConnector();
    const before = app.github.requests.length;
    const response = await calls.connect(id, { token });
    const connector = expectSuccess(response, 200);
    expect(connector).toMatchObject({ id, status: 'connected', accountLogin: 'login-AbCd', credentialHint: '…AbCd', credentialExpiresAt: '2030-01-31T12:00:00.000Z', disconnectedAt: null, expiredAt: null, version: 2 });
    expect(response.headers['etag']).toBe('"2"');
    expect(response.text).not.toContain(token);
    const check = app.github.requests.slice(before);
    expect(check.map((request) => request.path)).toEqual(['/user']);
    expect(check[0]!.headers.authorization).toBe(`Bearer ${token}`);
    expect(await sealedOf(id)).toMatch(/^v2\.k0\./);
    expect(databaseBytes(app.t.dataDir).includes(Buffer.from(token))).toBe(false);
    expect((await eventsAbout(app.t.store, id)).map((event) => event.type)).toEqual(['connector.created', 'connector.connected']);
    expect(JSON.stringify(await eventsAbout(app.t.store, id))).not.toContain(token);
  });

  it('takes a given expiresAt over the announced one, and reconnects an expired connector with a new token', async () => {
    const expiresAt = new Date(app.clock.now + 86_400_000).toISOString();
    const reconnected = expectSuccess(await calls.connect(app.fx.connectors.expired, { token: 'ghp_reconnectTokenForTheLegacyAccount0099', expiresAt }), 200);
    expect(reconnected).toMatchObject({ status: 'connected', credentialExpiresAt: expiresAt, credentialHint: '…0099', expiredAt: null });
  });

  it('shows a connector expired in its list once its credential lapses, though the list was read (and kept) before', async () => {
    const expiresAt = new Date(app.clock.now + 60_000).toISOString();
    const { id } = await newConnector();
    expectSuccess(await calls.connect(id, { token: 'ghp_lapsingTokenForTheKeptListPage000077', expiresAt }), 200);
    const statusInList = async () => (expectSuccess(await calls.send('GET', '/v1/connectors?limit=100'), 200).items as { id: string; status: string }[]).find((item) => item.id === id)!.status;
    expect(await statusInList()).toBe('connected');
    expect(await statusInList()).toBe('connected');
    app.clock.now += 60_000;
    expect(await statusInList()).toBe('expired');
  });

  it('answers 422 credential-refused when GitHub refuses the token, and stores nothing', async () => {
    const token = 'ghp_refusedByGithub000000000000000000000001';
    app.github.revokeToken(token);
    const { id } = await newConnector();
    const response = await calls.connect(id, { token });
    expectProblem(response, 422, 'validation', 'credential-refused');
    expect(response.text).not.toContain(token);
    expect(expectSuccess(await calls.get(id), 200)).toMatchObject({ status: 'not_connected', version: 1 });
    expect(await sealedOf(id)).toBeNull();
  });

  it('answers 422 to an expiresAt in the past, before asking GitHub', async () => {
    const { id } = await newConnector();
    const before = app.github.requests.length;
    expectProblem(await calls.connect(id, { token: 'ghp_x', expiresAt: new Date(app.clock.now - 1000).toISOString() }), 422, 'validation');
    expectProblem(await calls.connect(id, { token: '' }), 422, 'validation');
    expectProblem(await calls.connect(id, { token: 'has spaces in it' }), 422, 'validation');
    expect(app.github.requests.length).toBe(before);
  });

  it('answers 502 when GitHub fails, without its words, and stores nothing', async () => {
    const { id } = await newConnector();
    app.github.respondWith({ kind: 'status', status: 503, body: 'maintenance words' });
    try {
      const response = await calls.connect(id, { token: 'ghp_whileGithubIsDown0000000000000000000001' });
      expectProblem(response, 502, 'connector-provider-error', 'provider-status');
      expect(response.text).not.toContain('maintenance words');
    } finally {
      app.github.respondWith({ kind: 'normal' });
    }
    expect(await sealedOf(id)).toBeNull();
  });

  it('answers 404 for a connector of another workspace', async () => {
    expectProblem(await calls.connect(app.fx.otherWorkspace.connectorId, { token: 'ghp_x' }), 404, 'not-found', 'connector-not-found');
  });
});
