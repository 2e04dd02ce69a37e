import { ApiProblem } from '../problems.js';
import type { WorkPlatformHandler } from '../operationContext.js';
import { etagOf } from '../versions.js';

export const getContract: WorkPlatformHandler<'getContract'> = async (ctx) => {
  const { workspace } = ctx.caller;
  const contract = await ctx.services.contracts.getContract(workspace.id, ctx.params.contractId);
  if (!contract) throw new ApiProblem('not-found', { detail: `No contract ${ctx.params.contractId} in this workspace.`, code: 'contract-not-found' });
  return { status: 200, headers: { etag: etagOf(contract.version) }, body: contract };
};
