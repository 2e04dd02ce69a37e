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

describe('GET /v1/contacts/{contactId}', () => {
  it('answers 200 with the contact as created and its version as ETag, to a token with crm:read only', async () => {
    const contact = await crm.newContact({ name: 'Read me', email: 'read@example.com' });
    const response = await crm.get('contact', contact.id, await makePat(t.store, fx.workspaceId, ['crm:read']));
    expect(expectSuccess(response, 200)).toEqual(contact);
    expect(response.headers['etag']).toBe('"1"');
    expect(await eventsAbout(t.store, contact.id)).toHaveLength(1);
  });

  it('answers 404 contact-not-found for ids of any shape, a company id included', async () => {
    for (const id of ['ctc_ZZZZZZZZZZZZZZZZZZZZ', 'hello', fx.crm.companyIds[0]!]) {
      expectProblem(await crm.get('contact', id), 404, 'not-found', 'contact-not-found');
    }
  });

  it("answers 404 to another workspace's token", async () => {
    expectProblem(await crm.get('contact', fx.crm.contactIds[0]!, fx.otherWorkspace.token), 404, 'not-found', 'contact-not-found');
  });
});
