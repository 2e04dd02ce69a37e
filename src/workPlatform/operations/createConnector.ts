import type { WorkPlatformHandler } from '../operationContext.js';
import { createdHeaders } from '../versions.js';

export const createConnector: WorkPlatformHandler<'createConnector'> = async (ctx) => {
  const { workspace, actor } = ctx.caller;
  const connector = await ctx.services.connectors.store.createConnector(workspace.id, ctx.body, actor);
  return { status: 201, headers: createdHeaders('createConnector', connector), body: connector };
};
