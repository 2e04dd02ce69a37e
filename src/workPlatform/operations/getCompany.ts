import { ApiProblem } from '../problems.js';
import type { WorkPlatformHandler } from '../operationContext.js';
import { etagOf } from '../versions.js';

export const getCompany: WorkPlatformHandler<'getCompany'> = async (ctx) => {
  const { workspace } = ctx.caller;
  const company = await ctx.services.crm.companies.getCompany(workspace.id, ctx.params.companyId);
  if (!company) throw new ApiProblem('not-found', { detail: `No company ${ctx.params.companyId} in this workspace.`, code: 'company-not-found' });
  return { status: 200, headers: { etag: etagOf(company.version) }, body: company };
};
