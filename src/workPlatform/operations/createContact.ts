import type { WorkPlatformHandler } from '../operationContext.js';
import { createdHeaders } from '../versions.js';

export const createContact: WorkPlatformHandler<'createContact'> = async (ctx) => {
  const { workspace, actor } = ctx.caller;
  const contact = await ctx.services.crm.contacts.createContact(workspace.id, ctx.body, actor);
  return { status: 201, headers: createdHeaders('createContact', contact), body: contact };
};
