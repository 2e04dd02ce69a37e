import type { WorkPlatformHandler } from '../operationContext.js';
import { etagOf, requiredVersion } from '../versions.js';

export const updateContract: WorkPlatformHandler<'updateContract'> = async (ctx) => {
  const { workspace, actor } = ctx.caller;
  const expectedVersion = requiredVersion(ctx.headers['if-match']);
  const contract = await ctx.services.contracts.updateContract(workspace.id, ctx.params.contractId, ctx.body, expectedVersion, actor);
  return { status: 200, headers: { etag: etagOf(contract.version) }, body: contract };
};
