import type { WorkPlatformHandler } from '../operationContext.js';
import { versionFromIfMatch } from '../versions.js';

export const deleteDeal: WorkPlatformHandler<'deleteDeal'> = async (ctx) => {
  const { workspace, actor } = ctx.caller;
  await ctx.services.crm.deals.deleteDeal(workspace.id, ctx.params.dealId, versionFromIfMatch(ctx.headers['if-match']) ?? null, actor);
  return { status: 204, body: undefined };
};
