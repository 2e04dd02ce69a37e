import { describe } from 'vitest';
import { registerContractMoveCases, useContractSuite } from '../support/contracts.js';

const suite = useContractSuite();

describe('POST /v1/contracts/{contractId}/sign', () => {
  registerContractMoveCases(suite, {
    move: 'sign',
    from: 'sent',
    to: 'signed',
    sets: (sent, at) => ({ signedAt: at, sentAt: sent.sentAt }),
    refusals: [
      [[], 'contract-not-sent'],
      [['send', 'sign'], 'contract-already-signed'],
      [['send', 'decline'], 'contract-already-declined'],
      [['send', 'withdraw'], 'contract-not-sent'],
    ],
  });
});
