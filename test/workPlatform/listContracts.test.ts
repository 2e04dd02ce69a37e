import { describe, expect, it } from 'vitest';
import { dayAfter, useContractSuite } from '../support/contracts.js';
import { crmCalls } from '../support/crm.js';
import { expectProblem, expectSuccess } from '../support/workPlatform.js';
import { type WorkPlatformFixture } from '../support/testApp.js';

let fx: WorkPlatformFixture;
const { clock, app, contracts } = useContractSuite((started) => ({ fx } = started));
const crm = crmCalls(app);
const idsOf = (body: { items: { id: string }[] }) => body.items.map((item) => item.id);

describe('GET /v1/contracts', () => {
  it("lists the workspace's contracts only, the demo's in every status", async () => {
    const body = expectSuccess(await contracts.list({ limit: 100 }), 200);
    for (const id of Object.values(fx.contracts)) expect(idsOf(body)).toContain(id);
    expect(idsOf(body)).not.toContain(fx.otherWorkspace.contractId);
    expect(idsOf(expectSuccess(await contracts.list({}, fx.otherWorkspace.token), 200))).toEqual([fx.otherWorkspace.contractId]);
  });

  it('filters by company and deal, and pages with a cursor bound to the filters', async () => {
    const company = await crm.newCompany();
    const deal = await crm.newDeal({ companyId: company.id });
    clock.at += 1000;
    const a = await contracts.newContract({ companyId: company.id });
    clock.at += 1000;
    const b = await contracts.newContract({ companyId: undefined, dealId: deal.id });
    clock.at += 1000;
    const c = await contracts.newContract({ companyId: company.id, title: 'Third' });
    expect(idsOf(expectSuccess(await contracts.list({ companyId: company.id, order: 'asc' }), 200))).toEqual([a.id, b.id, c.id]);
    expect(idsOf(expectSuccess(await contracts.list({ dealId: deal.id }), 200))).toEqual([b.id]);
    expect(idsOf(expectSuccess(await contracts.list({ dealId: fx.otherWorkspace.dealId }), 200))).toEqual([]);
    const first = expectSuccess(await contracts.list({ companyId: company.id, limit: 2, sort: 'createdAt', order: 'desc' }), 200);
    expect(idsOf(first)).toEqual([c.id, b.id]);
    const second = expectSuccess(await contracts.list({ companyId: company.id, limit: 2, sort: 'createdAt', order: 'desc', cursor: first.nextCursor }), 200);
    expect(idsOf(second)).toEqual([a.id]);
    expect(second.nextCursor).toBeNull();
    expectProblem(await contracts.list({ dealId: deal.id, limit: 2, sort: 'createdAt', order: 'desc', cursor: first.nextCursor }), 422, 'validation', 'cursor-mismatch');
    expectProblem(await contracts.list({ status: 'closed' }), 422, 'validation');
  });

  it('filters and sorts by status and updatedAt as of the request: a sent contract past its date is expired', async () => {
    const start = clock.at;
    const company = await crm.newCompany();
    const lapsing = await contracts.contractIn(['send'], { companyId: company.id, expiresOn: dayAfter(clock.at, 0) });
    clock.at += 1000;
    const lasting = await contracts.contractIn(['send'], { companyId: company.id, expiresOn: dayAfter(clock.at, 30) });
    const draft = await contracts.newContract({ companyId: company.id });
    const byStatus = async (status: string) => idsOf(expectSuccess(await contracts.list({ companyId: company.id, status, order: 'asc' }), 200));
    expect(await byStatus('sent')).toEqual([lapsing.id, lasting.id]);
    expect(await byStatus('expired')).toEqual([]);

    const expiry = Date.parse(`${dayAfter(start, 1)}T00:00:00.000Z`);
    clock.at = expiry + 3_600_000;
    expect(await byStatus('sent')).toEqual([lasting.id]);
    expect(await byStatus('expired')).toEqual([lapsing.id]);
    expect(await byStatus('draft')).toEqual([draft.id]);
    const listed = expectSuccess(await contracts.list({ companyId: company.id, status: 'expired' }), 200).items[0];
    expect(listed).toMatchObject({ status: 'expired', version: 3, updatedAt: new Date(expiry).toISOString(), expiredAt: new Date(expiry).toISOString() });
    expect(idsOf(expectSuccess(await contracts.list({ companyId: company.id, updatedSince: new Date(expiry).toISOString() }), 200))).toEqual([lapsing.id]);
    expect(idsOf(expectSuccess(await contracts.list({ companyId: company.id, sort: 'updatedAt', order: 'desc' }), 200))[0]).toBe(lapsing.id);
    clock.at = start;
  });

  it('sorts by title and expiresOn with the id as tie-break', async () => {
    const company = await crm.newCompany();
    const late = await contracts.newContract({ companyId: company.id, title: 'B', expiresOn: dayAfter(clock.at, 50) });
    const early = await contracts.newContract({ companyId: company.id, title: 'B', expiresOn: dayAfter(clock.at, 10) });
    const first = await contracts.newContract({ companyId: company.id, title: 'A', expiresOn: dayAfter(clock.at, 50) });
    const tied = [late.id, early.id].sort();
    expect(idsOf(expectSuccess(await contracts.list({ companyId: company.id, sort: 'title', order: 'asc' }), 200))).toEqual([first.id, ...tied]);
    expect(idsOf(expectSuccess(await contracts.list({ companyId: company.id, sort: 'expiresOn', order: 'desc' }), 200))).toEqual([...[late.id, first.id].sort().reverse(), early.id]);
  });
});
