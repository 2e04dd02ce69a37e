import { describe, expect, it } from 'vitest';
import { dayAfter, useContractSuite } from '../support/contracts.js';
import { type TestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { eventsAbout, expectProblem, expectSuccess } from '../support/workPlatform.js';

let t: TestApp;
let fx: WorkPlatformFixture;
const { clock, contracts } = useContractSuite((started) => ({ t, fx } = started));

describe('DELETE /v1/contracts/{contractId}', () => {
  it('deletes a draft or a declined contract: 204, then 404, and records contract.deleted', async () => {
    for (const moves of [[], ['send', 'decline']] as const) {
      const contract = await contracts.contractIn([...moves]);
      expect((await contracts.remove(contract.id)).status).toBe(204);
      expectProblem(await contracts.get(contract.id), 404, 'not-found', 'contract-not-found');
      const events = await eventsAbout(t.store, contract.id);
      expect(events.at(-1)!.type).toBe('contract.deleted');
      expect(events.at(-1)!.payload.data.object).toEqual(contract);
    }
  });

  it('answers 409 contract-not-deletable to a sent or a signed contract', async () => {
    for (const moves of [['send'], ['send', 'sign']] as const) {
      const contract = await contracts.contractIn([...moves]);
      expectProblem(await contracts.remove(contract.id), 409, 'conflict', 'contract-not-deletable');
      expect(expectSuccess(await contracts.get(contract.id), 200)).toEqual(contract);
    }
  });

  it('deletes a sent contract past its date, recording its expiry first', async () => {
    const start = clock.at;
    const overdue = await contracts.contractIn(['send'], { expiresOn: dayAfter(clock.at, 0) });
    clock.at += 2 * 86_400_000;
    expect((await contracts.remove(overdue.id, '"3"')).status).toBe(204);
    const events = await eventsAbout(t.store, overdue.id);
    expect(events.map((event) => event.type)).toEqual(['contract.created', 'contract.sent', 'contract.expired', 'contract.deleted']);
    expect(events[3]!.payload.data.object).toMatchObject({ status: 'expired', version: 3 });
    clock.at = start;
  });

  it('checks If-Match when sent', async () => {
    const draft = await contracts.newContract();
    expectProblem(await contracts.remove(draft.id, '"9"'), 409, 'conflict', 'version-conflict');
    expect((await contracts.remove(draft.id, '1')).status).toBe(204);
  });

  it("answers 404 for another workspace's contract, which stays as it was", async () => {
    expectProblem(await contracts.remove(fx.otherWorkspace.contractId), 404, 'not-found', 'contract-not-found');
    expect(expectSuccess(await contracts.get(fx.otherWorkspace.contractId, fx.otherWorkspace.token), 200).status).toBe('draft');
  });
});
