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

describe('POST /v1/contacts', () => {
  it('answers 201 with the full contact, Location and ETag, and records contact.created', async () => {
    const company = await crm.newCompany();
    const response = await crm.create('contact', { name: 'Dana', email: 'dana@example.com', phone: '+4930123', companyId: company.id });
    const contact = expectSuccess(response, 201);
    expect(contact).toMatchObject({ name: 'Dana', email: 'dana@example.com', phone: '+4930123', companyId: company.id, version: 1 });
    expect(contact.id).toMatch(/^ctc_[A-Za-z0-9]{20}$/);
    expect(response.headers['location']).toBe(`/v1/contacts/${contact.id}`);
    expect(response.headers['etag']).toBe('"1"');
    expect((await eventsAbout(t.store, contact.id)).map((event) => event.type)).toEqual(['contact.created']);
  });

  it('defaults email, phone and companyId to null', async () => {
    expect(await crm.newContact({ name: 'Solo' })).toMatchObject({ email: null, phone: null, companyId: null });
  });

  it("answers 404 company-not-found for a missing company or another workspace's", async () => {
    for (const companyId of ['cmp_ZZZZZZZZZZZZZZZZZZZZ', fx.otherWorkspace.companyId]) {
      expectProblem(await crm.create('contact', { name: 'x', companyId }), 404, 'not-found', 'company-not-found');
    }
  });

  it('answers 422 to a malformed email or a missing name, and 400 beyond the storage limits', async () => {
    expectProblem(await crm.create('contact', { name: 'x', email: 'not-an-email' }), 422, 'validation');
    expectProblem(await crm.create('contact', { email: 'a@b.example' }), 422, 'validation');
    expectProblem(await crm.create('contact', { name: 'x', phone: '1'.repeat(41) }), 400, 'bad-request', 'value-too-long');
    expectProblem(await crm.create('contact', { name: 'x', email: `${'a'.repeat(250)}@b.example` }), 400, 'bad-request', 'value-too-long');
  });
});
