import { ApiProblem } from '../problems.js';
import type { WorkPlatformHandler } from '../operationContext.js';
import { etagOf } from '../versions.js';

export const getDeal: WorkPlatformHandler<'getDeal'> = async (ctx) => {
  const { workspace } = ctx.caller;
  const deal = await ctx.services.crm.deals.getDeal(workspace.id, ctx.params.dealId);
  if (!deal) throw new ApiProblem('not-found', { detail: `No deal ${ctx.params.dealId} in this workspace.`, code: 'deal-not-found' });
  return { status: 200, headers: { etag: etagOf(deal.version) }, body: deal };
};
