import { crmListRequest, updatedSinceOf } from '../crmLists.js';
import { listEnvelope, startAfter } from '../listPages.js';
import type { WorkPlatformHandler } from '../operationContext.js';

export const listContracts: WorkPlatformHandler<'listContracts'> = async (ctx) => {
  const { workspace } = ctx.caller;
  const { sort, order, limit, cursor } = ctx.query;
  const filters = {
    status: ctx.query.status || undefined,
    companyId: ctx.query.companyId || undefined,
    dealId: ctx.query.dealId || undefined,
    updatedSince: updatedSinceOf(ctx.query.updatedSince),
  };
  const request = crmListRequest('contracts', workspace.id, filters, sort, order, cursor);
  const page = await ctx.services.contracts.listContracts(workspace.id, { sort, order, limit, ...filters, after: startAfter(ctx.services.cursors, request) });
  return { status: 200, body: listEnvelope(ctx.services.cursors, request, page) };
};
