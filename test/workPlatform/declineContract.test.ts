import { describe } from 'vitest';
import { registerContractMoveCases, useContractSuite } from '../support/contracts.js';

const suite = useContractSuite();

describe('POST /v1/contracts/{contractId}/decline', () => {
  registerContractMoveCases(suite, {
    move: 'decline',
    from: 'sent',
    to: 'declined',
    sets: (_sent, at) => ({ declinedAt: at, signedAt: null }),
    refusals: [
      [[], 'contract-not-sent'],
      [['send', 'sign'], 'contract-already-signed'],
      [['send', 'decline'], 'contract-already-declined'],
      [['send', 'withdraw'], 'contract-not-sent'],
    ],
  });
});
