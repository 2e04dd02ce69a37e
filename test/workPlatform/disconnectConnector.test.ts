import { describe, expect, it } from 'vitest';
import { connectorCalls, useConnectorTestApp, type ConnectorTestApp } from '../support/connectors.js';
import { eventsAbout, expectProblem, expectSuccess } from '../support/workPlatform.js';

let app: ConnectorTestApp;
useConnectorTestApp((started) => (app = started));
const calls = connectorCalls(() => app);

describe('DELETE /v1/connectors/{connectorId}/connection', () => {
  it('erases the credential, answers the connector disconnected, records connector.disconnected; imports then answer connector-not-connected', async () => {
    const connector = await calls.connected('ghp_toBeDisconnected00000000000000000000001');
    const response = await calls.disconnect(connector.id);
    const body = expectSuccess(response, 200);
    expect(body).toMatchObject({ status: 'disconnected', credentialHint: null, accountLogin: null, credentialExpiresAt: null, version: connector.version + 1 });
    expect(body.disconnectedAt).toBe(new Date(app.clock.now).toISOString());
    expect(await app.t.sql.value('SELECT sealed_credential FROM connectors WHERE id = ?', connector.id)).toBeNull();
    expect((await eventsAbout(app.t.store, connector.id)).map((event) => event.type)).toEqual(['connector.created', 'connector.connected', 'connector.disconnected']);
    const problem = expectProblem(await calls.importIssues(connector.id, { repository: 'acme/x', projectId: app.fx.projectId }), 409, 'conflict', 'connector-not-connected');
    expect(problem.connectorId).toBe(connector.id);
  });

  it('answers a connector without a credential as it is, unchanged and without an event', async () => {
    const before = expectSuccess(await calls.get(app.fx.connectors.disconnected), 200);
    expect(expectSuccess(await calls.disconnect(app.fx.connectors.disconnected), 200)).toEqual(before);
  });

  it('answers 404 for a connector of another workspace', async () => {
    expectProblem(await calls.disconnect(app.fx.otherWorkspace.connectorId), 404, 'not-found', 'connector-not-found');
  });
});
