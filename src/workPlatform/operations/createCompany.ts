import type { WorkPlatformHandler } from '../operationContext.js';
import { etagOf } from '../versions.js';

export const createCompany: WorkPlatformHandler<'createCompany'> = async (ctx) => {
  const { workspace, actor } = ctx.caller;
  const company = await ctx.services.crm.companies.createCompany(workspace.id, ctx.body, actor);
  return { status: 201, headers: { location: `/v1/companies/${company.id}`, etag: etagOf(company.version) }, body: company };
};
