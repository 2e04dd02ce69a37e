import type { WorkPlatformHandler } from '../operationContext.js';
import { createdHeaders } from '../versions.js';

export const createCompany: WorkPlatformHandler<'createCompany'> = async (ctx) => {
  const { workspace, actor } = ctx.caller;
  const company = await ctx.services.crm.companies.createCompany(workspace.id, ctx.body, actor);
  return { status: 201, headers: createdHeaders('createCompany', company), body: company };
};
