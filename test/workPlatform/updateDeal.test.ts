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

describe('PATCH /v1/deals/{dealId}', () => {
  it('records deal.updated and then deal.stage_changed when the stage changes', async () => {
    const deal = await crm.newDeal();
    const response = await crm.update('deal', deal.id, { stage: 'negotiation', amountMinor: 5000 }, '1');
    expect(expectSuccess(response, 200)).toMatchObject({ stage: 'negotiation', amountMinor: 5000, version: 2 });
    expect(response.headers['etag']).toBe('"2"');
    expect((await eventsAbout(t.store, deal.id)).map((event) => event.type)).toEqual(['deal.created', 'deal.updated', 'deal.stage_changed']);
    expectSuccess(await crm.update('deal', deal.id, { title: 'Renamed' }, '2'), 200);
    expect((await eventsAbout(t.store, deal.id)).map((event) => event.type)).toEqual(['deal.created', 'deal.updated', 'deal.stage_changed', 'deal.updated']);
  });

  it('replaces contactIds, and a patch that changes nothing writes nothing', async () => {
    const [a, b] = [await crm.newContact(), await crm.newContact()];
    const deal = await crm.newDeal({ contactIds: [a.id] });
    expect(expectSuccess(await crm.update('deal', deal.id, { contactIds: [b.id, a.id] }, '1'), 200).contactIds).toEqual([b.id, a.id]);
    expect(expectSuccess(await crm.update('deal', deal.id, { contactIds: [b.id, a.id] }, '2'), 200).version).toBe(2);
    expect(expectSuccess(await crm.update('deal', deal.id, { contactIds: [] }, '2'), 200).contactIds).toEqual([]);
    expect((await crm.remove('contact', a.id)).status).toBe(204);
  });

  it("answers 404 for another workspace's owner, company or contact and changes nothing", async () => {
    const deal = await crm.newDeal();
    expectProblem(await crm.update('deal', deal.id, { ownerId: 'usr_demoOwnerRuth' }, '1'), 404, 'not-found', 'user-not-found');
    expectProblem(await crm.update('deal', deal.id, { companyId: fx.otherWorkspace.companyId }, '1'), 404, 'not-found', 'company-not-found');
    expectProblem(await crm.update('deal', deal.id, { contactIds: [fx.otherWorkspace.contactId] }, '1'), 404, 'not-found', 'contact-not-found');
    expect(expectSuccess(await crm.get('deal', deal.id), 200).version).toBe(1);
  });

  it('answers 428 without If-Match, 409 when stale, 422 to an unknown stage', async () => {
    const deal = await crm.newDeal();
    expectProblem(await crm.update('deal', deal.id, { stage: 'won' }), 428, 'precondition-required');
    expectProblem(await crm.update('deal', deal.id, { stage: 'won' }, '4'), 409, 'conflict', 'version-conflict');
    expectProblem(await crm.update('deal', deal.id, { stage: 'closed' }, '1'), 422, 'validation');
  });

  it("answers 404 for another workspace's deal", async () => {
    expectProblem(await crm.update('deal', fx.otherWorkspace.dealId, { stage: 'won' }, '1'), 404, 'not-found', 'deal-not-found');
  });
});
