import { describe, expect, it } from 'vitest';
import { dayAfter, registerContractMoveCases, useContractSuite } from '../support/contracts.js';
import { expectProblem, expectSuccess } from '../support/workPlatform.js';

const suite = useContractSuite();
const { clock, contracts } = suite;

describe('POST /v1/contracts/{contractId}/send', () => {
  registerContractMoveCases(suite, {
    move: 'send',
    from: 'draft',
    to: 'sent',
    sets: (_draft, at) => ({ sentAt: at }),
    refusals: [
      [['send'], 'contract-already-sent'],
      [['send', 'sign'], 'contract-already-signed'],
      [['send', 'decline'], 'contract-already-declined'],
    ],
  });

  it('answers 409 contract-expired to an expired contract and contract-expiry-passed to a draft whose day has passed', async () => {
    const start = clock.at;
    const overdue = await contracts.contractIn(['send'], { expiresOn: dayAfter(clock.at, 1) });
    const lateDraft = await contracts.newContract({ expiresOn: dayAfter(clock.at, 1) });
    clock.at += 3 * 86_400_000;
    expectProblem(await contracts.move(overdue.id, 'send'), 409, 'conflict', 'contract-expired');
    expectProblem(await contracts.move(lateDraft.id, 'send'), 409, 'conflict', 'contract-expiry-passed');
    // Its expiresOn changed, the draft can go out.
    const moved = expectSuccess(await contracts.update(lateDraft.id, { expiresOn: dayAfter(clock.at, 0) }, '1'), 200);
    expect(expectSuccess(await contracts.move(lateDraft.id, 'send', { 'if-match': String(moved.version) }), 200).status).toBe('sent');
    clock.at = start;
  });
});
