import type { WorkPlatformHandler } from '../operationContext.js';
import { etagOf } from '../versions.js';

export const createContract: WorkPlatformHandler<'createContract'> = async (ctx) => {
  const { workspace, actor } = ctx.caller;
  const contract = await ctx.services.contracts.createContract(workspace.id, ctx.body, actor);
  return { status: 201, headers: { location: `/v1/contracts/${contract.id}`, etag: etagOf(contract.version) }, body: contract };
};
