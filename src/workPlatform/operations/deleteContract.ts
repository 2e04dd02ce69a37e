import type { WorkPlatformHandler } from '../operationContext.js';
import { versionFromIfMatch } from '../versions.js';

export const deleteContract: WorkPlatformHandler<'deleteContract'> = async (ctx) => {
  const { workspace, actor } = ctx.caller;
  await ctx.services.contracts.deleteContract(workspace.id, ctx.params.contractId, versionFromIfMatch(ctx.headers['if-match']) ?? null, actor);
  return { status: 204, body: undefined };
};
