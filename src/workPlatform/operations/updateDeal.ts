import type { WorkPlatformHandler } from '../operationContext.js';
import { etagOf, requiredVersion } from '../versions.js';

export const updateDeal: WorkPlatformHandler<'updateDeal'> = async (ctx) => {
  const { workspace, actor } = ctx.caller;
  const expectedVersion = requiredVersion(ctx.headers['if-match']);
  const deal = await ctx.services.crm.deals.updateDeal(workspace.id, ctx.params.dealId, ctx.body, expectedVersion, actor);
  return { status: 200, headers: { etag: etagOf(deal.version) }, body: deal };
};
