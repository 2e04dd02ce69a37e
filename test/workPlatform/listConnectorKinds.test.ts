import { describe, expect, it } from 'vitest';
import { connectorCalls } from '../support/connectors.js';
import { useTestApp, type WorkPlatformTestApp } from '../support/testApp.js';
import { expectSuccess } from '../support/workPlatform.js';

let app: WorkPlatformTestApp;
useTestApp(({ workPlatform: started }) => (app = started), { liftCallLimits: true });
const calls = connectorCalls(() => app);

describe('GET /v1/connector-kinds', () => {
  it('lists only kinds that work end to end: github, available, importing issues with a token', async () => {
    const body = expectSuccess(await calls.send('GET', '/v1/connector-kinds'), 200);
    expect(body.items).toHaveLength(1);
    expect(body.items[0]).toMatchObject({ id: 'github', available: true, capabilities: ['issue-import'], credential: { type: 'token' } });
  });
});
