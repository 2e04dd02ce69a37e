import { WorkPlatformStoreError, type ContractStateError, type InUseError, type StorageLimitError, type ValueRefusedError } from '../store/workPlatformErrors.js';
import { ApiProblem, tooLongIssue } from './problems.js';

/** Turns the store's typed refusals into the contract's problems; anything else passes through. */
export function storeErrorToProblem(error: unknown): unknown {
  if (!(error instanceof WorkPlatformStoreError)) return error;
  switch (error.kind) {
    case 'not-found':
      return new ApiProblem('not-found', { detail: error.message, code: (error as { code?: string }).code, cause: error });
    case 'version-conflict':
      return new ApiProblem('conflict', { detail: error.message, code: 'version-conflict', cause: error });
    case 'project-has-tasks':
      return new ApiProblem('conflict', { detail: error.message, code: 'project-has-tasks', cause: error });
    case 'in-use':
      return new ApiProblem('conflict', { detail: error.message, code: (error as InUseError).code, cause: error });
    case 'storage-limit-exceeded':
      return new ApiProblem('bad-request', {
        detail: error.message,
        code: 'value-too-long',
        cause: error,
        extensions: { errors: [tooLongIssue((error as StorageLimitError).field, (error as StorageLimitError).limit)] },
      });
    case 'invalid-value':
      return new ApiProblem('bad-request', { detail: error.message, code: 'invalid-value', cause: error });
    case 'value-refused':
      return new ApiProblem('validation', {
        detail: error.message,
        cause: error,
        extensions: { errors: (error as ValueRefusedError).refused.map(({ path, code, message }) => ({ path, code, message })) },
      });
    case 'webhook-limit-reached':
      return new ApiProblem('conflict', { detail: error.message, code: 'webhook-limit-reached', cause: error });
    case 'webhook-disabled':
      return new ApiProblem('conflict', { detail: error.message, code: 'webhook-disabled', cause: error });
    case 'contract-state':
      return new ApiProblem('conflict', { detail: error.message, code: (error as ContractStateError).code, cause: error });
    default:
      return error;
  }
}
