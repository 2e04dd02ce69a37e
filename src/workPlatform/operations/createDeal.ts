import type { WorkPlatformHandler } from '../operationContext.js';
import { createdHeaders } from '../versions.js';

export const createDeal: WorkPlatformHandler<'createDeal'> = async (ctx) => {
  const { workspace, actor } = ctx.caller;
  const deal = await ctx.services.crm.deals.createDeal(workspace.id, ctx.body, actor);
  return { status: 201, headers: createdHeaders('createDeal', deal), body: deal };
};
