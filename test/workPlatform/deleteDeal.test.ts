import { describe, expect, it } from 'vitest';
import type { ContractClient } from '../support/contractClient.js';
import { contractCalls } from '../support/contracts.js';
import { crmCalls } from '../support/crm.js';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { eventsAbout, expectProblem, expectSuccess } from '../support/workPlatform.js';

let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, client, fx } = app), { liftCallLimits: true });
const crm = crmCalls(() => ({ t, client, fx }));
const contracts = contractCalls(() => ({ t, client, fx }));

describe('DELETE /v1/deals/{dealId}', () => {
  it('answers 204, then 404, records deal.deleted, and frees its company and contacts', async () => {
    const company = await crm.newCompany();
    const contact = await crm.newContact({ companyId: company.id });
    const deal = await crm.newDeal({ companyId: company.id, contactIds: [contact.id] });
    const response = await crm.remove('deal', deal.id);
    expect(response.status).toBe(204);
    expectProblem(await crm.get('deal', deal.id), 404, 'not-found', 'deal-not-found');
    expect((await eventsAbout(t.store, deal.id)).map((event) => event.type)).toEqual(['deal.created', 'deal.deleted']);
    expect((await crm.remove('contact', contact.id)).status).toBe(204);
    expect((await crm.remove('company', company.id)).status).toBe(204);
  });

  it('answers 409 deal-has-contracts while a contract names it, and changes nothing', async () => {
    const deal = await crm.newDeal();
    const contract = await contracts.newContract({ companyId: undefined, dealId: deal.id });
    expectProblem(await crm.remove('deal', deal.id), 409, 'conflict', 'deal-has-contracts');
    expect(expectSuccess(await crm.get('deal', deal.id), 200).version).toBe(1);
    expectProblem(await contracts.update(contract.id, { dealId: null }, '1'), 422, 'validation');
    expectSuccess(await contracts.update(contract.id, { dealId: null, companyId: fx.crm.companyIds[0] }, '1'), 200);
    expect((await crm.remove('deal', deal.id)).status).toBe(204);
  });

  it('checks If-Match when sent', async () => {
    const deal = await crm.newDeal();
    expectProblem(await crm.remove('deal', deal.id, '"9"'), 409, 'conflict', 'version-conflict');
    expect((await crm.remove('deal', deal.id, '1')).status).toBe(204);
  });

  it("answers 404 for another workspace's deal", async () => {
    expectProblem(await crm.remove('deal', fx.otherWorkspace.dealId), 404, 'not-found', 'deal-not-found');
  });
});
