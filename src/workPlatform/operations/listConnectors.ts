import { creatorRemovedBinding } from '../../store/workPlatformValues.js';
import { listReply, updatedSinceOf } from '../listPages.js';
import type { WorkPlatformHandler } from '../operationContext.js';

export const listConnectors: WorkPlatformHandler<'listConnectors'> = (ctx) => {
  const workspaceId = ctx.caller.workspace.id;
  const creatorRemoved = creatorRemovedBinding(ctx.query.creatorRemoved);
  const given = { kind: ctx.query.kind || undefined, updatedSince: updatedSinceOf(ctx.query.updatedSince) };
  // creatorRemoved is bound only when given: without it, the binding is the one cursors had before the filter existed.
  const filters = creatorRemoved === undefined ? given : { ...given, creatorRemoved };
  return listReply(ctx, workspaceId, 'connectors', ctx.query, filters, (options) => ctx.services.connectors.store.listConnectors(workspaceId, options), true);
};
