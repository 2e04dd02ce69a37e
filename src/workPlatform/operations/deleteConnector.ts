import type { WorkPlatformHandler } from '../operationContext.js';
import { versionFromIfMatch } from '../versions.js';

export const deleteConnector: WorkPlatformHandler<'deleteConnector'> = async (ctx) => {
  const { workspace, actor } = ctx.caller;
  await ctx.services.connectors.store.deleteConnector(workspace.id, ctx.params.connectorId, versionFromIfMatch(ctx.headers['if-match']) ?? null, actor);
  return { status: 204, body: undefined };
};
