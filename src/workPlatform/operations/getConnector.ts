import { connectorNotFound } from '../connectorCalls.js';
import type { WorkPlatformHandler } from '../operationContext.js';
import { etagOf } from '../versions.js';

export const getConnector: WorkPlatformHandler<'getConnector'> = async (ctx) => {
  const connector = await ctx.services.connectors.store.getConnector(ctx.caller.workspace.id, ctx.params.connectorId);
  if (!connector) throw connectorNotFound(ctx.params.connectorId);
  return { status: 200, headers: { etag: etagOf(connector.version) }, body: connector };
};
