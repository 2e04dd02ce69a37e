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

describe('GET /v1/companies/{companyId}', () => {
  it('answers 200 with the company as created and its version as ETag, to a token with crm:read only', async () => {
    const company = await crm.newCompany({ name: 'Read me', domain: 'read.example' });
    const response = await crm.get('company', company.id, await makePat(t.store, fx.workspaceId, ['crm:read']));
    expect(expectSuccess(response, 200)).toEqual(company);
    expect(response.headers['etag']).toBe('"1"');
    expect(await eventsAbout(t.store, company.id)).toHaveLength(1);
  });

  it('answers 404 company-not-found for ids of any shape, a contact id included', async () => {
    for (const id of ['cmp_ZZZZZZZZZZZZZZZZZZZZ', 'hello', fx.crm.contactIds[0]!]) {
      expectProblem(await crm.get('company', id), 404, 'not-found', 'company-not-found');
    }
  });

  it("answers 404 to another workspace's token", async () => {
    expectProblem(await crm.get('company', fx.crm.companyIds[0]!, fx.otherWorkspace.token), 404, 'not-found', 'company-not-found');
  });
});
