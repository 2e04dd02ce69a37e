import { describe, expect, it } from 'vitest';
import { connectorCalls, useConnectorTestApp, type ConnectorTestApp } from '../support/connectors.js';
import { makeIssues } from '../support/githubApiServer.js';
import { eventsAbout, expectProblem, expectSuccess } from '../support/workPlatform.js';

let app: ConnectorTestApp;
useConnectorTestApp((started) => (app = started));
const calls = connectorCalls(() => app);
const remove = (id: string, extra: Record<string, string> = {}, token?: string) => calls.send('DELETE', `/v1/connectors/${id}`, undefined, token, extra);

describe('DELETE /v1/connectors/{connectorId}', () => {
  it('deletes the connector with its credential, records connector.deleted, keeps the tasks it imported and their issue records', async () => {
    const connector = await calls.connected('ghp_deletedConnectorToken000000000000000001');
    app.github.setRepository('acme/kept', makeIssues(2));
    expectSuccess(await calls.importIssues(connector.id, { repository: 'acme/kept', projectId: app.fx.projectId }), 200);
    expectProblem(await remove(connector.id, { 'if-match': '"1"' }), 409, 'conflict', 'version-conflict');
    expect((await remove(connector.id, { 'if-match': `"${connector.version}"` })).status).toBe(204);
    expectProblem(await calls.get(connector.id), 404, 'not-found', 'connector-not-found');
    expect((await eventsAbout(app.t.store, connector.id)).map((event) => event.type).at(-1)).toBe('connector.deleted');
    expect((await app.t.sql.value<number>('SELECT count(*) AS n FROM connectors WHERE id = ?', connector.id))).toBe(0);

    // Another connector importing the same repository updates those tasks instead of making new ones.
    const other = await calls.connected('ghp_secondConnectorSameRepo00000000000000002');
    expect(expectSuccess(await calls.importIssues(other.id, { repository: 'acme/kept', projectId: app.fx.projectId }), 200)).toMatchObject({ created: 0, unchanged: 2 });
  });

  it('answers 404 for a connector of another workspace', async () => {
    expectProblem(await remove(app.fx.otherWorkspace.connectorId), 404, 'not-found', 'connector-not-found');
  });
});
