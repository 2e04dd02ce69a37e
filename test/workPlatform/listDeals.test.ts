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

type Listed = { id: string; stage: string; ownerId: string; companyId: string | null; amountMinor: number };

describe('GET /v1/deals', () => {
  it("lists the workspace's deals, to a token with crm:read only", async () => {
    const { items } = expectSuccess(await crm.list('deal', { limit: 100 }, await makePat(t.store, fx.workspaceId, ['crm:read'])), 200);
    const ids = items.map((item: Listed) => item.id);
    for (const id of fx.crm.dealIds) expect(ids).toContain(id);
    expect(ids).not.toContain(fx.otherWorkspace.dealId);
  });

  it('filters by stage, ownerId and companyId together', async () => {
    const company = await crm.newCompany();
    const match = await crm.newDeal({ stage: 'won', ownerId: 'usr_demoMemberKai', companyId: company.id });
    await crm.newDeal({ stage: 'lost', ownerId: 'usr_demoMemberKai', companyId: company.id });
    await crm.newDeal({ stage: 'won', ownerId: 'usr_demoOwnerMara', companyId: company.id });
    const page = expectSuccess(await crm.list('deal', { stage: 'won', ownerId: 'usr_demoMemberKai', companyId: company.id }), 200);
    expect(page.items.map((item: Listed) => item.id)).toEqual([match.id]);
    const won = expectSuccess(await crm.list('deal', { stage: 'won', limit: 100 }), 200).items as Listed[];
    expect(won.length).toBeGreaterThan(1);
    expect(won.every((item) => item.stage === 'won')).toBe(true);
  });

  it('sorts by amountMinor with the id tie-break across pages; a cursor is bound to its filters', async () => {
    const first = expectSuccess(await crm.list('deal', { sort: 'amountMinor', order: 'asc', limit: 3 }), 200);
    const second = expectSuccess(await crm.list('deal', { sort: 'amountMinor', order: 'asc', limit: 3, cursor: first.nextCursor }), 200);
    const amounts = [...first.items, ...second.items].map((item: Listed) => item.amountMinor);
    expect(amounts).toEqual([...amounts].sort((a, b) => a - b));
    expectProblem(await crm.list('deal', { sort: 'amountMinor', order: 'asc', limit: 3, stage: 'lead', cursor: first.nextCursor }), 422, 'validation', 'cursor-mismatch');
    expectProblem(await crm.list('deal', { sort: 'title', order: 'asc', limit: 3, cursor: first.nextCursor }), 422, 'validation', 'cursor-mismatch');
  });

  it('filters by updatedSince', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const fresh = await crm.newDeal();
    expect(expectSuccess(await crm.list('deal', { updatedSince: since }), 200).items.map((item: Listed) => item.id)).toContain(fresh.id);
    expect(expectSuccess(await crm.list('deal', { updatedSince: '2999-01-01T00:00:00Z' }), 200).items).toEqual([]);
  });

  it('answers 422 to an unknown stage filter', async () => {
    expectProblem(await crm.list('deal', { stage: 'closed' }), 422, 'validation');
  });
});
