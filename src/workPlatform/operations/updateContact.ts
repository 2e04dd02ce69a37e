import type { WorkPlatformHandler } from '../operationContext.js';
import { etagOf, requiredVersion } from '../versions.js';

export const updateContact: WorkPlatformHandler<'updateContact'> = async (ctx) => {
  const { workspace, actor } = ctx.caller;
  const expectedVersion = requiredVersion(ctx.headers['if-match']);
  const contact = await ctx.services.crm.contacts.updateContact(workspace.id, ctx.params.contactId, ctx.body, expectedVersion, actor);
  return { status: 200, headers: { etag: etagOf(contact.version) }, body: contact };
};
