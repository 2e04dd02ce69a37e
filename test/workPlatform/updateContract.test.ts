import { describe, expect, it } from 'vitest';
import { dayAfter, useContractSuite } from '../support/contracts.js';
import { crmCalls } from '../support/crm.js';
import { type TestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { eventsAbout, expectProblem, expectSuccess } from '../support/workPlatform.js';

let t: TestApp;
let fx: WorkPlatformFixture;
const { clock, app, contracts } = useContractSuite((started) => ({ t, fx } = started));
const crm = crmCalls(app);

describe('PATCH /v1/contracts/{contractId}', () => {
  it('changes a draft, bumps the version and records contract.updated; a patch that changes nothing writes nothing', async () => {
    const draft = await contracts.newContract();
    clock.at += 1000;
    const response = await contracts.update(draft.id, { title: 'Renamed', amountMinor: 500, currency: 'USD', body: 'New terms', expiresOn: dayAfter(clock.at, 60) }, '"1"');
    const updated = expectSuccess(response, 200);
    expect(updated).toMatchObject({ title: 'Renamed', amountMinor: 500, currency: 'USD', body: 'New terms', expiresOn: dayAfter(clock.at, 60), version: 2, status: 'draft' });
    expect(response.headers['etag']).toBe('"2"');
    expect(expectSuccess(await contracts.update(draft.id, { title: 'Renamed' }, '2'), 200)).toEqual(updated);
    expect(expectSuccess(await contracts.update(draft.id, { amountMinor: null, currency: null, body: null }, '2'), 200)).toMatchObject({ amountMinor: null, currency: null, body: null, version: 3 });
    expect((await eventsAbout(t.store, draft.id)).map((event) => event.type)).toEqual(['contract.created', 'contract.updated', 'contract.updated']);
  });

  it("a new deal brings its company when the patch names none; a company other than the deal's answers 422", async () => {
    const company = await crm.newCompany();
    const deal = await crm.newDeal({ companyId: company.id });
    const draft = await contracts.newContract();
    expect(expectSuccess(await contracts.update(draft.id, { dealId: deal.id }, '1'), 200)).toMatchObject({ dealId: deal.id, companyId: company.id });
    expectProblem(await contracts.update(draft.id, { companyId: fx.crm.companyIds[0] }, '2'), 422, 'validation');
    expectProblem(await contracts.update(draft.id, { dealId: null, companyId: null }, '2'), 422, 'validation');
    expectProblem(await contracts.update(draft.id, { amountMinor: 10 }, '2'), 422, 'validation');
    expectProblem(await contracts.update(draft.id, { dealId: fx.otherWorkspace.dealId }, '2'), 404, 'not-found', 'deal-not-found');
    expect(expectSuccess(await contracts.update(draft.id, { dealId: null }, '2'), 200)).toMatchObject({ dealId: null, companyId: company.id, version: 3 });
  });

  it('answers 409 contract-not-editable to every status but draft', async () => {
    for (const moves of [['send'], ['send', 'sign'], ['send', 'decline']] as const) {
      const contract = await contracts.contractIn([...moves]);
      expectProblem(await contracts.update(contract.id, { title: 'No' }, String(contract.version)), 409, 'conflict', 'contract-not-editable');
    }
    const start = clock.at;
    const overdue = await contracts.contractIn(['send'], { expiresOn: dayAfter(clock.at, 0) });
    clock.at += 2 * 86_400_000;
    expectProblem(await contracts.update(overdue.id, { title: 'No' }, '3'), 409, 'conflict', 'contract-not-editable');
    clock.at = start;
  });

  it('answers 428 without If-Match, 409 version-conflict when stale, 422 to unknown members', async () => {
    const draft = await contracts.newContract();
    expectProblem(await contracts.update(draft.id, { title: 'x' }), 428, 'precondition-required');
    expectProblem(await contracts.update(draft.id, { title: 'x' }, '4'), 409, 'conflict', 'version-conflict');
    expectProblem(await contracts.update(draft.id, { status: 'signed' }, '1'), 422, 'validation');
    expectProblem(await contracts.update(draft.id, {}, '1'), 422, 'validation');
  });

  it("answers 404 for another workspace's contract", async () => {
    expectProblem(await contracts.update(fx.otherWorkspace.contractId, { title: 'x' }, '1'), 404, 'not-found', 'contract-not-found');
  });
});
