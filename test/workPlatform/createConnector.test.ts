import { describe, expect, it } from 'vitest';
import { connectorCalls } from '../support/connectors.js';
import { type WorkPlatformTestApp, useTestApp } from '../support/testApp.js';
import { eventsAbout, expectProblem, expectSuccess } from '../support/workPlatform.js';

let app: WorkPlatformTestApp;
useTestApp(({ workPlatform: started }) => (app = started), { liftCallLimits: true });
const calls = connectorCalls(() => app);

describe('POST /v1/connectors', () => {
  it('answers 201 with a not_connected connector, Location and ETag, and records connector.created', async () => {
    const response = await calls.create({ kind: 'github', name: 'GitHub (acme org)' });
    const connector = expectSuccess(response, 201);
    expect(connector).toMatchObject({ kind: 'github', name: 'GitHub (acme org)', status: 'not_connected', accountLogin: null, credentialHint: null, credentialExpiresAt: null, connectedAt: null, version: 1 });
    expect(connector.id).toMatch(/^con_[A-Za-z0-9]{20}$/);
    expect(response.headers['location']).toBe(`/v1/connectors/${connector.id}`);
    expect(response.headers['etag']).toBe('"1"');
    expect((await eventsAbout(app.t.store, connector.id)).map((event) => event.type)).toEqual(['connector.created']);
  });

  it('allows several connectors of a kind', async () => {
    const a = expectSuccess(await calls.create({ kind: 'github', name: 'Same name' }), 201);
    const b = expectSuccess(await calls.create({ kind: 'github', name: 'Same name' }), 201);
    expect(a.id).not.toBe(b.id);
  });

  it('answers 422 to an unknown kind or an empty name, 400 to a name over 120 characters', async () => {
    expectProblem(await calls.create({ kind: 'gitlab', name: 'x' }), 422, 'validation');
    expectProblem(await calls.create({ kind: 'github', name: '' }), 422, 'validation');
    expectProblem(await calls.create({ kind: 'github', name: 'n'.repeat(121) }), 400, 'bad-request', 'value-too-long');
  });
});
