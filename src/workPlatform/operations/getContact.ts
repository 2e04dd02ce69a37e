import { ApiProblem } from '../problems.js';
import type { WorkPlatformHandler } from '../operationContext.js';
import { etagOf } from '../versions.js';

export const getContact: WorkPlatformHandler<'getContact'> = async (ctx) => {
  const { workspace } = ctx.caller;
  const contact = await ctx.services.crm.contacts.getContact(workspace.id, ctx.params.contactId);
  if (!contact) throw new ApiProblem('not-found', { detail: `No contact ${ctx.params.contactId} in this workspace.`, code: 'contact-not-found' });
  return { status: 200, headers: { etag: etagOf(contact.version) }, body: contact };
};
