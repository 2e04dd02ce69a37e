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

describe('GET /v1/deals/{dealId}', () => {
  it('answers 200 with the deal as created and its version as ETag, to a token with crm:read only', async () => {
    const deal = await crm.newDeal({ contactIds: [fx.crm.contactIds[0]] });
    const response = await crm.get('deal', deal.id, await makePat(t.store, fx.workspaceId, ['crm:read']));
    expect(expectSuccess(response, 200)).toEqual(deal);
    expect(response.headers['etag']).toBe('"1"');
    expect(await eventsAbout(t.store, deal.id)).toHaveLength(1);
  });

  it('answers 404 deal-not-found for ids of any shape', async () => {
    for (const id of ['del_ZZZZZZZZZZZZZZZZZZZZ', 'hello', fx.crm.companyIds[0]!]) {
      expectProblem(await crm.get('deal', id), 404, 'not-found', 'deal-not-found');
    }
  });

  it("answers 404 to another workspace's token", async () => {
    expectProblem(await crm.get('deal', fx.crm.dealIds[0]!, fx.otherWorkspace.token), 404, 'not-found', 'deal-not-found');
  });
});
