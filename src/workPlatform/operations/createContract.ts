import type { WorkPlatformHandler } from '../operationContext.js';
import { createdHeaders } from '../versions.js';

export const createContract: WorkPlatformHandler<'createContract'> = async (ctx) => {
  const { workspace, actor } = ctx.caller;
  const contract = await ctx.services.contracts.createContract(workspace.id, ctx.body, actor);
  return { status: 201, headers: createdHeaders('createContract', contract), body: contract };
};
