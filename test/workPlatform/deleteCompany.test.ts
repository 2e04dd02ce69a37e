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

describe('DELETE /v1/companies/{companyId}', () => {
  it('answers 204, then 404, and records company.deleted', async () => {
    const company = await crm.newCompany();
    const response = await crm.remove('company', company.id);
    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    expectProblem(await crm.get('company', company.id), 404, 'not-found', 'company-not-found');
    expectProblem(await crm.remove('company', company.id), 404, 'not-found', 'company-not-found');
    expect((await eventsAbout(t.store, company.id)).map((event) => event.type)).toEqual(['company.created', 'company.deleted']);
  });

  it('detaches its contacts: companyId null, a new version and contact.updated', async () => {
    const company = await crm.newCompany();
    const contact = await crm.newContact({ companyId: company.id });
    expect((await crm.remove('company', company.id)).status).toBe(204);
    expect(expectSuccess(await crm.get('contact', contact.id), 200)).toMatchObject({ companyId: null, version: 2 });
    expect((await eventsAbout(t.store, contact.id)).map((event) => event.type)).toEqual(['contact.created', 'contact.updated']);
  });

  it('answers 409 company-has-deals while a deal names it, and changes nothing', async () => {
    const company = await crm.newCompany();
    const contact = await crm.newContact({ companyId: company.id });
    const deal = await crm.newDeal({ companyId: company.id });
    expectProblem(await crm.remove('company', company.id), 409, 'conflict', 'company-has-deals');
    expect(expectSuccess(await crm.get('contact', contact.id), 200).companyId).toBe(company.id);
    expectSuccess(await crm.update('deal', deal.id, { companyId: null }, '1'), 200);
    expect((await crm.remove('company', company.id)).status).toBe(204);
  });

  it('answers 409 company-has-contracts while a contract names it, and changes nothing', async () => {
    const company = await crm.newCompany();
    const contract = await contracts.newContract({ companyId: company.id });
    expectProblem(await crm.remove('company', company.id), 409, 'conflict', 'company-has-contracts');
    expect(expectSuccess(await crm.get('company', company.id), 200).version).toBe(1);
    expect((await contracts.remove(contract.id)).status).toBe(204);
    expect((await crm.remove('company', company.id)).status).toBe(204);
  });

  it('checks If-Match when sent', async () => {
    const company = await crm.newCompany();
    expectProblem(await crm.remove('company', company.id, '"3"'), 409, 'conflict', 'version-conflict');
    expect((await crm.remove('company', company.id, '1')).status).toBe(204);
  });

  it("answers 404 for another workspace's company", async () => {
    expectProblem(await crm.remove('company', fx.otherWorkspace.companyId), 404, 'not-found', 'company-not-found');
  });
});
