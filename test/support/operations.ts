import { operationsOf, type ContractOperation } from '../../scripts/conformance/contractOperations.js';
import { loadContractDocument } from './contractClient.js';

export type { ContractOperation };

const operationsByApi = new Map<string, readonly ContractOperation[]>();

/** Every operation of a served contract, so shared suites cover a new operation without edits (read once per process). */
export function contractOperations(api = 'portfolio'): readonly ContractOperation[] {
  let operations = operationsByApi.get(api);
  if (!operations) {
    operations = Object.freeze(operationsOf(loadContractDocument(api)).map((operation) => Object.freeze(operation)));
    operationsByApi.set(api, operations);
  }
  return operations;
}
