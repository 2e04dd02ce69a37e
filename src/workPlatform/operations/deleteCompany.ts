import type { WorkPlatformHandler } from '../operationContext.js';
import { versionFromIfMatch } from '../versions.js';

export const deleteCompany: WorkPlatformHandler<'deleteCompany'> = async (ctx) => {
  const { workspace, actor } = ctx.caller;
  await ctx.services.crm.companies.deleteCompany(workspace.id, ctx.params.companyId, versionFromIfMatch(ctx.headers['if-match']) ?? null, actor);
  return { status: 204, body: undefined };
};
