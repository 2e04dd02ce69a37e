import type { WorkPlatformHandler } from '../operationContext.js';
import { etagOf } from '../versions.js';

export const createContact: WorkPlatformHandler<'createContact'> = async (ctx) => {
  const { workspace, actor } = ctx.caller;
  const contact = await ctx.services.crm.contacts.createContact(workspace.id, ctx.body, actor);
  return { status: 201, headers: { location: `/v1/contacts/${contact.id}`, etag: etagOf(contact.version) }, body: contact };
};
