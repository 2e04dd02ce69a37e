import { crmListRequest, updatedSinceOf } from '../crmLists.js';
import { listEnvelope, startAfter } from '../listPages.js';
import type { WorkPlatformHandler } from '../operationContext.js';

export const listDeals: WorkPlatformHandler<'listDeals'> = async (ctx) => {
  const { workspace } = ctx.caller;
  const { sort, order, limit, cursor } = ctx.query;
  const filters = {
    stage: ctx.query.stage || undefined,
    ownerId: ctx.query.ownerId || undefined,
    companyId: ctx.query.companyId || undefined,
    updatedSince: updatedSinceOf(ctx.query.updatedSince),
  };
  const request = crmListRequest('deals', workspace.id, filters, sort, order, cursor);
  const page = await ctx.services.crm.deals.listDeals(workspace.id, { sort, order, limit, ...filters, after: startAfter(ctx.services.cursors, request) });
  return { status: 200, body: listEnvelope(ctx.services.cursors, request, page) };
};
