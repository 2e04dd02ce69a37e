import { describe, expect, it } from 'vitest';
import type { ContractClient } from '../support/contractClient.js';
import { crmCalls } from '../support/crm.js';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { eventsAbout, expectProblem, expectSuccess, makePat } from '../support/workPlatform.js';

let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, client, fx } = app), { liftCallLimits: true });
const crm = crmCalls(() => ({ t, client, fx }));

describe('GET /v1/companies', () => {
  it("lists the workspace's companies newest first by default, to a token with crm:read only", async () => {
    const response = await crm.list('company', {}, await makePat(t.store, fx.workspaceId, ['crm:read']));
    const { items, nextCursor } = expectSuccess(response, 200);
    expect(items.map((item: { id: string }) => item.id).sort()).toEqual([...fx.crm.companyIds].sort());
    expect(items.map((item: { createdAt: string }) => item.createdAt)).toEqual(items.map((item: { createdAt: string }) => item.createdAt).sort().reverse());
    expect(nextCursor).toBeNull();
    expect(items.some((item: { id: string }) => item.id === fx.otherWorkspace.companyId)).toBe(false);
  });

  it('sorts by name with the id tie-break and pages with a cursor', async () => {
    const first = expectSuccess(await crm.list('company', { sort: 'name', order: 'asc', limit: 2 }), 200);
    expect(first.items).toHaveLength(2);
    const second = expectSuccess(await crm.list('company', { sort: 'name', order: 'asc', limit: 2, cursor: first.nextCursor }), 200);
    const names = [...first.items, ...second.items].map((item: { name: string }) => item.name);
    expect(names).toEqual([...names].sort());
  });

  it('filters by updatedSince, and binds the filter into the cursor', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const fresh = await crm.newCompany({ name: 'Fresh' });
    const page = expectSuccess(await crm.list('company', { updatedSince: since }), 200);
    expect(page.items.map((item: { id: string }) => item.id)).toEqual([fresh.id]);
    const cursor = expectSuccess(await crm.list('company', { limit: 1 }), 200).nextCursor;
    expectProblem(await crm.list('company', { limit: 1, cursor, updatedSince: since }), 422, 'validation', 'cursor-mismatch');
  });

  it('answers 422 to an unknown sort or a malformed updatedSince', async () => {
    expectProblem(await crm.list('company', { sort: 'domain' }), 422, 'validation');
    expectProblem(await crm.list('company', { updatedSince: 'yesterday' }), 422, 'validation');
  });
});
