import { listReply, updatedSinceOf } from '../listPages.js';
import type { WorkPlatformHandler } from '../operationContext.js';

export const listDeals: WorkPlatformHandler<'listDeals'> = (ctx) => {
  const workspaceId = ctx.caller.workspace.id;
  const filters = {
    stage: ctx.query.stage || undefined,
    ownerId: ctx.query.ownerId || undefined,
    companyId: ctx.query.companyId || undefined,
    updatedSince: updatedSinceOf(ctx.query.updatedSince),
  };
  return listReply(ctx, workspaceId, 'deals', ctx.query, filters, (options) => ctx.services.crm.deals.listDeals(workspaceId, options));
};
