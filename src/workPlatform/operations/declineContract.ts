import type { WorkPlatformHandler } from '../operationContext.js';
import { etagOf, versionFromIfMatch } from '../versions.js';

export const declineContract: WorkPlatformHandler<'declineContract'> = async (ctx) => {
  const { workspace, actor } = ctx.caller;
  const expectedVersion = versionFromIfMatch(ctx.headers['if-match']) ?? null;
  const contract = await ctx.services.contracts.moveContract(workspace.id, ctx.params.contractId, 'decline', expectedVersion, actor);
  return { status: 200, headers: { etag: etagOf(contract.version) }, body: contract };
};
