import { listReply, updatedSinceOf } from '../listPages.js';
import type { WorkPlatformHandler } from '../operationContext.js';

export const listContacts: WorkPlatformHandler<'listContacts'> = (ctx) => {
  const workspaceId = ctx.caller.workspace.id;
  const filters = { companyId: ctx.query.companyId || undefined, updatedSince: updatedSinceOf(ctx.query.updatedSince) };
  return listReply(ctx, workspaceId, 'contacts', ctx.query, filters, (options) => ctx.services.crm.contacts.listContacts(workspaceId, options));
};
