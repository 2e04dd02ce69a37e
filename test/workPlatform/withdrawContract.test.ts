import { describe, expect, it } from 'vitest';
import { registerContractMoveCases, useContractSuite } from '../support/contracts.js';
import { expectSuccess } from '../support/workPlatform.js';

const suite = useContractSuite();
const { contracts } = suite;

describe('POST /v1/contracts/{contractId}/withdraw', () => {
  registerContractMoveCases(suite, {
    move: 'withdraw',
    from: 'sent',
    to: 'draft',
    sets: () => ({ sentAt: null }),
    refusals: [
      [[], 'contract-not-sent'],
      [['send', 'sign'], 'contract-already-signed'],
      [['send', 'decline'], 'contract-already-declined'],
      [['send', 'withdraw'], 'contract-not-sent'],
    ],
  });

  it('leaves a draft again: it can be edited and sent anew', async () => {
    const withdrawn = await contracts.contractIn(['send', 'withdraw']);
    expect(expectSuccess(await contracts.update(withdrawn.id, { title: 'Revised' }, '3'), 200)).toMatchObject({ title: 'Revised', version: 4 });
    expect(expectSuccess(await contracts.move(withdrawn.id, 'send'), 200)).toMatchObject({ status: 'sent', version: 5 });
  });
});
