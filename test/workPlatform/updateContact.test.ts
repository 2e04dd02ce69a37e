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

describe('PATCH /v1/contacts/{contactId}', () => {
  it('changes the given fields, moves it to another company, bumps the version and records contact.updated', async () => {
    const [first, second] = [await crm.newCompany(), await crm.newCompany()];
    const contact = await crm.newContact({ companyId: first.id, phone: '+1' });
    const response = await crm.update('contact', contact.id, { companyId: second.id, phone: null }, '1');
    expect(expectSuccess(response, 200)).toMatchObject({ companyId: second.id, phone: null, version: 2 });
    expect(response.headers['etag']).toBe('"2"');
    expect((await eventsAbout(t.store, contact.id)).map((event) => event.type)).toEqual(['contact.created', 'contact.updated']);
  });

  it("answers 404 company-not-found for another workspace's company and changes nothing", async () => {
    const contact = await crm.newContact();
    expectProblem(await crm.update('contact', contact.id, { companyId: fx.otherWorkspace.companyId }, '1'), 404, 'not-found', 'company-not-found');
    expect(expectSuccess(await crm.get('contact', contact.id), 200).version).toBe(1);
  });

  it('answers 428 without If-Match, 409 when stale, 422 to a malformed email', async () => {
    const contact = await crm.newContact();
    expectProblem(await crm.update('contact', contact.id, { name: 'x' }), 428, 'precondition-required');
    expectProblem(await crm.update('contact', contact.id, { name: 'x' }, '2'), 409, 'conflict', 'version-conflict');
    expectProblem(await crm.update('contact', contact.id, { email: 'nope' }, '1'), 422, 'validation');
  });

  it("answers 404 for another workspace's contact", async () => {
    expectProblem(await crm.update('contact', fx.otherWorkspace.contactId, { name: 'x' }, '1'), 404, 'not-found', 'contact-not-found');
  });
});
