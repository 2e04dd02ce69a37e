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

describe('GET /v1/contacts', () => {
  it("lists the workspace's contacts, to a token with crm:read only", async () => {
    const { items, nextCursor } = expectSuccess(await crm.list('contact', { limit: 100 }, await makePat(t.store, fx.workspaceId, ['crm:read'])), 200);
    const ids = items.map((item: { id: string }) => item.id);
    for (const id of fx.crm.contactIds) expect(ids).toContain(id);
    expect(ids).not.toContain(fx.otherWorkspace.contactId);
    expect(nextCursor).toBeNull();
  });

  it('filters by companyId (through every page) and binds the filter into the cursor', async () => {
    const company = await crm.newCompany();
    const mine = [await crm.newContact({ companyId: company.id }), await crm.newContact({ companyId: company.id }), await crm.newContact({ companyId: company.id })];
    await crm.newContact();
    const first = expectSuccess(await crm.list('contact', { companyId: company.id, limit: 2, sort: 'name', order: 'asc' }), 200);
    const second = expectSuccess(await crm.list('contact', { companyId: company.id, limit: 2, sort: 'name', order: 'asc', cursor: first.nextCursor }), 200);
    expect(second.nextCursor).toBeNull();
    expect([...first.items, ...second.items].map((item: { id: string }) => item.id).sort()).toEqual(mine.map((contact) => contact.id).sort());
    const other = await crm.newCompany();
    expectProblem(await crm.list('contact', { companyId: other.id, limit: 2, sort: 'name', order: 'asc', cursor: first.nextCursor }), 422, 'validation', 'cursor-mismatch');
    expect(expectSuccess(await crm.list('contact', { companyId: fx.otherWorkspace.companyId }), 200).items).toEqual([]);
  });

  it('filters by updatedSince', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const fresh = await crm.newContact({ name: 'Fresh' });
    expect(expectSuccess(await crm.list('contact', { updatedSince: since }), 200).items.map((item: { id: string }) => item.id)).toContain(fresh.id);
    expect(expectSuccess(await crm.list('contact', { updatedSince: '2999-01-01T00:00:00Z' }), 200).items).toEqual([]);
  });

  it('answers 422 to a malformed companyId filter', async () => {
    expectProblem(await crm.list('contact', { companyId: 'prj_x' }), 422, 'validation');
  });
});
