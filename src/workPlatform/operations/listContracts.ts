import { listReply, updatedSinceOf } from '../listPages.js';
import type { WorkPlatformHandler } from '../operationContext.js';

export const listContracts: WorkPlatformHandler<'listContracts'> = (ctx) => {
  const workspaceId = ctx.caller.workspace.id;
  const filters = {
    status: ctx.query.status || undefined,
    companyId: ctx.query.companyId || undefined,
    dealId: ctx.query.dealId || undefined,
    updatedSince: updatedSinceOf(ctx.query.updatedSince),
  };
  return listReply(ctx, workspaceId, 'contracts', ctx.query, filters, (options) => ctx.services.contracts.listContracts(workspaceId, options), true);
};
