import type { WorkPlatformHandler } from '../operationContext.js';
import { versionFromIfMatch } from '../versions.js';

export const deleteContact: WorkPlatformHandler<'deleteContact'> = async (ctx) => {
  const { workspace, actor } = ctx.caller;
  await ctx.services.crm.contacts.deleteContact(workspace.id, ctx.params.contactId, versionFromIfMatch(ctx.headers['if-match']) ?? null, actor);
  return { status: 204, body: undefined };
};
