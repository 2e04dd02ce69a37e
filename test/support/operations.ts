import { operationsOf, type ContractOperation } from '../../scripts/conformance/contractOperations.js';
import { loadContractDocument } from './contractClient.js';

export type { ContractOperation };

/** Every operation of a served contract, so shared suites cover a new operation without edits. */
export function contractOperations(api = 'portfolio'): ContractOperation[] {
  return operationsOf(loadContractDocument(api));
}
