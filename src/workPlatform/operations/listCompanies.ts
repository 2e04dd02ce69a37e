import { listReply, updatedSinceOf } from '../listPages.js';
import type { WorkPlatformHandler } from '../operationContext.js';

export const listCompanies: WorkPlatformHandler<'listCompanies'> = (ctx) => {
  const workspaceId = ctx.caller.workspace.id;
  const filters = { updatedSince: updatedSinceOf(ctx.query.updatedSince) };
  return listReply(ctx, workspaceId, 'companies', ctx.query, filters, (options) => ctx.services.crm.companies.listCompanies(workspaceId, options));
};
