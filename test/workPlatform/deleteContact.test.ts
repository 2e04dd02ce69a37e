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

describe('DELETE /v1/contacts/{contactId}', () => {
  it('answers 204, then 404, and records contact.deleted', async () => {
    const contact = await crm.newContact();
    const response = await crm.remove('contact', contact.id);
    expect(response.status).toBe(204);
    expectProblem(await crm.get('contact', contact.id), 404, 'not-found', 'contact-not-found');
    expect((await eventsAbout(t.store, contact.id)).map((event) => event.type)).toEqual(['contact.created', 'contact.deleted']);
  });

  it('answers 409 contact-has-deals while a deal lists it', async () => {
    const contact = await crm.newContact();
    const deal = await crm.newDeal({ contactIds: [contact.id] });
    expectProblem(await crm.remove('contact', contact.id), 409, 'conflict', 'contact-has-deals');
    expectSuccess(await crm.update('deal', deal.id, { contactIds: [] }, '1'), 200);
    expect((await crm.remove('contact', contact.id)).status).toBe(204);
  });

  it('checks If-Match when sent', async () => {
    const contact = await crm.newContact();
    expectProblem(await crm.remove('contact', contact.id, '"2"'), 409, 'conflict', 'version-conflict');
    expect((await crm.remove('contact', contact.id, '"1"')).status).toBe(204);
  });

  it("answers 404 for another workspace's contact", async () => {
    expectProblem(await crm.remove('contact', fx.otherWorkspace.contactId), 404, 'not-found', 'contact-not-found');
  });
});
