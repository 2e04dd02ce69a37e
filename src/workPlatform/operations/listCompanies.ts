import { crmListRequest, updatedSinceOf } from '../crmLists.js';
import { listEnvelope, startAfter } from '../listPages.js';
import type { WorkPlatformHandler } from '../operationContext.js';

export const listCompanies: WorkPlatformHandler<'listCompanies'> = async (ctx) => {
  const { workspace } = ctx.caller;
  const { sort, order, limit, cursor } = ctx.query;
  const filters = { updatedSince: updatedSinceOf(ctx.query.updatedSince) };
  const request = crmListRequest('companies', workspace.id, filters, sort, order, cursor);
  const page = await ctx.services.crm.companies.listCompanies(workspace.id, { sort, order, limit, ...filters, after: startAfter(ctx.services.cursors, request) });
  return { status: 200, body: listEnvelope(ctx.services.cursors, request, page) };
};
