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

describe('PATCH /v1/companies/{companyId}', () => {
  it('changes the given fields, bumps the version and records company.updated', async () => {
    const company = await crm.newCompany({ name: 'Before', domain: 'before.example' });
    const response = await crm.update('company', company.id, { name: 'After', domain: null }, '"1"');
    const updated = expectSuccess(response, 200);
    expect(updated).toMatchObject({ id: company.id, name: 'After', domain: null, description: null, version: 2 });
    expect(response.headers['etag']).toBe('"2"');
    expect((await eventsAbout(t.store, company.id)).map((event) => event.type)).toEqual(['company.created', 'company.updated']);
  });

  it('writes nothing for a patch that changes nothing', async () => {
    const company = await crm.newCompany({ name: 'Same' });
    expect(expectSuccess(await crm.update('company', company.id, { name: 'Same' }, '1'), 200).version).toBe(1);
    expect(await eventsAbout(t.store, company.id)).toHaveLength(1);
  });

  it('answers 428 without If-Match and 409 version-conflict with a stale one', async () => {
    const company = await crm.newCompany();
    expectProblem(await crm.update('company', company.id, { name: 'x' }), 428, 'precondition-required');
    expectProblem(await crm.update('company', company.id, { name: 'x' }, '"7"'), 409, 'conflict', 'version-conflict');
  });

  it('answers 422 to an empty patch and 400 beyond the storage limit', async () => {
    const company = await crm.newCompany();
    expectProblem(await crm.update('company', company.id, {}, '1'), 422, 'validation');
    expectProblem(await crm.update('company', company.id, { name: 'n'.repeat(201) }, '1'), 400, 'bad-request', 'value-too-long');
  });

  it("answers 404 for another workspace's company", async () => {
    expectProblem(await crm.update('company', fx.otherWorkspace.companyId, { name: 'x' }, '1'), 404, 'not-found', 'company-not-found');
  });
});
