import { describe, expect, it } from 'vitest';
import { contractHousekeeping } from '../../src/scheduledJobs.js';
import { createContractStore } from '../../src/store/contracts.js';
import { dayAfter, useContractSuite } from '../support/contracts.js';
import { type TestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { eventsAbout, expectProblem, expectSuccess } from '../support/workPlatform.js';

let t: TestApp;
let fx: WorkPlatformFixture;
const { clock, contracts } = useContractSuite((started) => ({ t, fx } = started));
/** The server's expiry job, on the test's clock. */
const sweep = () => contractHousekeeping(createContractStore(t.store, { now: () => clock.at }))[0]!.run();

describe('GET /v1/contracts/{contractId}', () => {
  it('answers the contract with its version as ETag', async () => {
    const contract = await contracts.newContract({ body: 'Terms', amountMinor: 10, currency: 'JPY' });
    const response = await contracts.get(contract.id);
    expect(expectSuccess(response, 200)).toEqual(contract);
    expect(response.headers['etag']).toBe('"1"');
  });

  it('never shows sent past expiresOn: expired from 00:00 UTC of the next day, the same before and after the sweep records it', async () => {
    const start = clock.at;
    const sent = await contracts.contractIn(['send'], { expiresOn: dayAfter(clock.at, 1) });
    const expiry = Date.parse(`${dayAfter(start, 2)}T00:00:00.000Z`);
    clock.at = expiry - 1;
    expect(await sweep()).toBe(0);
    expect(expectSuccess(await contracts.get(sent.id), 200)).toEqual(sent);
    clock.at = expiry;
    const shown = await contracts.get(sent.id);
    const expired = expectSuccess(shown, 200);
    expect(expired).toEqual({ ...sent, status: 'expired', expiredAt: new Date(expiry).toISOString(), updatedAt: new Date(expiry).toISOString(), version: 3 });
    expect(shown.headers['etag']).toBe('"3"');
    expect((await eventsAbout(t.store, sent.id)).map((event) => event.type)).toEqual(['contract.created', 'contract.sent']);

    clock.at = expiry + 45_000;
    expect(await sweep()).toBeGreaterThanOrEqual(1);
    expect(expectSuccess(await contracts.get(sent.id), 200)).toEqual(expired);
    const events = await eventsAbout(t.store, sent.id);
    expect(events.map((event) => event.type)).toEqual(['contract.created', 'contract.sent', 'contract.expired']);
    expect(events[2]!.payload.actor).toEqual({ id: 'contract-expiry', kind: 'SYSTEM' });
    expect(events[2]!.payload.data.object).toEqual(expired);
    expect(await sweep()).toBe(0);
    expect(await eventsAbout(t.store, sent.id)).toHaveLength(3);
    clock.at = start;
  });

  it('leaves drafts and final contracts as they are past their date', async () => {
    const start = clock.at;
    const draft = await contracts.newContract({ expiresOn: dayAfter(clock.at, 1) });
    const signed = await contracts.contractIn(['send', 'sign'], { expiresOn: dayAfter(clock.at, 1) });
    clock.at += 5 * 86_400_000;
    await sweep();
    expect(expectSuccess(await contracts.get(draft.id), 200)).toEqual(draft);
    expect(expectSuccess(await contracts.get(signed.id), 200)).toEqual(signed);
    clock.at = start;
  });

  it("answers 404 for an unknown id and another workspace's contract", async () => {
    for (const id of ['ctr_ZZZZZZZZZZZZZZZZZZZZ', 'hello', fx.crm.companyIds[0]!, fx.otherWorkspace.contractId]) {
      expectProblem(await contracts.get(id), 404, 'not-found', 'contract-not-found');
    }
    expect(expectSuccess(await contracts.get(fx.otherWorkspace.contractId, fx.otherWorkspace.token), 200).id).toBe(fx.otherWorkspace.contractId);
    expectProblem(await contracts.get(fx.contracts.draft, fx.otherWorkspace.token), 404, 'not-found', 'contract-not-found');
  });

  it('shows the demo contracts in every status', async () => {
    const statuses = await Promise.all(
      (['draft', 'sent', 'signed', 'declined', 'expired'] as const).map(async (status) => expectSuccess(await contracts.get(fx.contracts[status]), 200).status),
    );
    expect(statuses).toEqual(['draft', 'sent', 'signed', 'declined', 'expired']);
  });
});
