import { describe, expect, it } from 'vitest';
import type { ContractClient } from '../support/contractClient.js';
import { crmCalls } from '../support/crm.js';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { eventsAbout, expectProblem, expectSuccess } from '../support/workPlatform.js';

let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, client, fx } = app), { liftCallLimits: true });
const crm = crmCalls(() => ({ t, client, fx }));

describe('POST /v1/deals', () => {
  it('answers 201 with the full deal, Location and ETag, and records deal.created', async () => {
    const company = await crm.newCompany();
    const [a, b] = [await crm.newContact(), await crm.newContact()];
    const response = await crm.create('deal', {
      title: 'Big one', stage: 'proposal', amountMinor: 1_250_000, currency: 'EUR', ownerId: 'usr_demoAdminTeo',
      companyId: company.id, contactIds: [b.id, a.id], expectedCloseOn: '2026-12-31',
    });
    const deal = expectSuccess(response, 201);
    expect(deal).toMatchObject({ title: 'Big one', stage: 'proposal', amountMinor: 1_250_000, currency: 'EUR', ownerId: 'usr_demoAdminTeo', companyId: company.id, contactIds: [b.id, a.id], expectedCloseOn: '2026-12-31', version: 1 });
    expect(deal.id).toMatch(/^del_[A-Za-z0-9]{20}$/);
    expect(response.headers['location']).toBe(`/v1/deals/${deal.id}`);
    expect((await eventsAbout(t.store, deal.id)).map((event) => event.type)).toEqual(['deal.created']);
  });

  it('takes an expectedCloseOn of the years 0000–0099 as written (201), and refuses a day those years do not have (422)', async () => {
    const early = expectSuccess(await crm.create('deal', { title: 'Long ago', amountMinor: 1, currency: 'EUR', ownerId: 'usr_demoOwnerMara', expectedCloseOn: '0044-03-15' }), 201);
    expect(early.expectedCloseOn).toBe('0044-03-15');
    expectProblem(await crm.create('deal', { title: 'Never', amountMinor: 1, currency: 'EUR', ownerId: 'usr_demoOwnerMara', expectedCloseOn: '0043-02-29' }), 422, 'validation');
  });

  it('defaults stage to lead, companyId and expectedCloseOn to null, contactIds to none', async () => {
    expect(await crm.newDeal()).toMatchObject({ stage: 'lead', companyId: null, contactIds: [], expectedCloseOn: null });
  });

  it('answers 422 to a negative or fractional amount, a lower-case currency, an unknown stage, a bad day, a repeated contact', async () => {
    const base = { title: 'x', amountMinor: 1, currency: 'EUR', ownerId: 'usr_demoOwnerMara' };
    for (const change of [{ amountMinor: -1 }, { amountMinor: 1.5 }, { currency: 'eur' }, { currency: 'EURO' }, { stage: 'closed' }, { expectedCloseOn: '2026-13-01' }, { contactIds: [fx.crm.contactIds[0], fx.crm.contactIds[0]] }, { ownerId: undefined }]) {
      expectProblem(await crm.create('deal', { ...base, ...change }), 422, 'validation');
    }
    expectProblem(await crm.create('deal', { ...base, title: 't'.repeat(201) }), 400, 'bad-request', 'value-too-long');
  });

  it("answers 404 for an owner, company or contact of another workspace, and stores nothing", async () => {
    const base = { title: 'x', amountMinor: 1, currency: 'EUR', ownerId: 'usr_demoOwnerMara' };
    const before = (await t.sql.value<number>('SELECT count(*) AS n FROM deals'));
    expectProblem(await crm.create('deal', { ...base, ownerId: 'usr_demoOwnerRuth' }), 404, 'not-found', 'user-not-found');
    expectProblem(await crm.create('deal', { ...base, companyId: fx.otherWorkspace.companyId }), 404, 'not-found', 'company-not-found');
    expectProblem(await crm.create('deal', { ...base, contactIds: [fx.crm.contactIds[0], fx.otherWorkspace.contactId] }), 404, 'not-found', 'contact-not-found');
    expect((await t.sql.value<number>('SELECT count(*) AS n FROM deals'))).toBe(before);
  });
});
