import type { WorkPlatformHandler } from '../operationContext.js';
import { etagOf, requiredVersion } from '../versions.js';

export const updateCompany: WorkPlatformHandler<'updateCompany'> = async (ctx) => {
  const { workspace, actor } = ctx.caller;
  const expectedVersion = requiredVersion(ctx.headers['if-match']);
  const company = await ctx.services.crm.companies.updateCompany(workspace.id, ctx.params.companyId, ctx.body, expectedVersion, actor);
  return { status: 200, headers: { etag: etagOf(company.version) }, body: company };
};
