import { describe, expect, it } from 'vitest';
import { connectorCalls } from '../support/connectors.js';
import { useTestApp, type WorkPlatformTestApp } from '../support/testApp.js';
import { expectProblem, expectSuccess } from '../support/workPlatform.js';

let app: WorkPlatformTestApp;
useTestApp(({ workPlatform: started }) => (app = started), { liftCallLimits: true });
const calls = connectorCalls(() => app);
const list = (query = '', token?: string) => calls.send('GET', `/v1/connectors${query}`, undefined, token);

describe('GET /v1/connectors', () => {
  it("lists the workspace's connectors with their status, newest first (the default order), never another workspace's", async () => {
    const body = expectSuccess(await list(), 200);
    expect(body.items.map((connector: { id: string; status: string }) => [connector.id, connector.status])).toEqual([
      [app.fx.connectors.disconnected, 'disconnected'],
      [app.fx.connectors.expired, 'expired'],
      [app.fx.connectors.connected, 'connected'],
    ]);
    expect(body.nextCursor).toBeNull();
  });

  it('pages with a cursor bound to the sort and the kind filter', async () => {
    const first = expectSuccess(await list('?limit=2&sort=name&order=asc&kind=github'), 200);
    expect(first.items).toHaveLength(2);
    const second = expectSuccess(await list(`?limit=2&sort=name&order=asc&kind=github&cursor=${first.nextCursor}`), 200);
    expect(second.items).toHaveLength(1);
    expect([...first.items, ...second.items].map((item: { name: string }) => item.name)).toEqual(['GitHub (Northwind org)', 'GitHub (former contractor)', 'GitHub (legacy account)']);
    expectProblem(await list(`?limit=2&sort=name&order=asc&cursor=${first.nextCursor}`), 422, 'validation', 'cursor-mismatch');
  });
});
