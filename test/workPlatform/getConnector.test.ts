import { describe, expect, it } from 'vitest';
import { connectorCalls } from '../support/connectors.js';
import { useTestApp, type WorkPlatformTestApp } from '../support/testApp.js';
import { expectProblem, expectSuccess } from '../support/workPlatform.js';

let app: WorkPlatformTestApp;
useTestApp(({ workPlatform: started }) => (app = started), { liftCallLimits: true });
const calls = connectorCalls(() => app);

describe('GET /v1/connectors/{connectorId}', () => {
  it("shows the demo's connectors in each status, never their credential", async () => {
    const connected = await calls.get(app.fx.connectors.connected);
    expect(expectSuccess(connected, 200)).toMatchObject({ status: 'connected', accountLogin: 'northwind-demo', credentialHint: '…0001', credentialExpiresAt: null });
    expect(connected.headers['etag']).toBe(`"${connected.body.version}"`);
    expect(connected.text).not.toContain('ghp_');
    const expired = expectSuccess(await calls.get(app.fx.connectors.expired), 200);
    expect(expired.status).toBe('expired');
    expect(expired.expiredAt).toBe(expired.credentialExpiresAt);
    expect(expectSuccess(await calls.get(app.fx.connectors.disconnected), 200)).toMatchObject({ status: 'disconnected', credentialHint: null });
  });

  it('answers 404 connector-not-found for a missing id or one of another workspace', async () => {
    expectProblem(await calls.get('con_ZZZZZZZZZZZZZZZZZZZZ'), 404, 'not-found', 'connector-not-found');
    expectProblem(await calls.get(app.fx.otherWorkspace.connectorId), 404, 'not-found', 'connector-not-found');
  });
});
