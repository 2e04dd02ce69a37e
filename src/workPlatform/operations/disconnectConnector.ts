import type { WorkPlatformHandler } from '../operationContext.js';
import { etagOf } from '../versions.js';

export const disconnectConnector: WorkPlatformHandler<'disconnectConnector'> = async (ctx) => {
  const { workspace, actor } = ctx.caller;
  const connector = await ctx.services.connectors.store.disconnect(workspace.id, ctx.params.connectorId, actor);
  return { status: 200, headers: { etag: etagOf(connector.version) }, body: connector };
};
