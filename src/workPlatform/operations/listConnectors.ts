import { creatorRemovedBinding } from '../../store/workPlatformValues.js';
import { crmListRequest, updatedSinceOf } from '../crmLists.js';
import { listEnvelope, startAfter } from '../listPages.js';
import type { WorkPlatformHandler } from '../operationContext.js';

export const listConnectors: WorkPlatformHandler<'listConnectors'> = async (ctx) => {
  const { workspace } = ctx.caller;
  const { sort, order, limit, cursor } = ctx.query;
  const creatorRemoved = creatorRemovedBinding(ctx.query.creatorRemoved);
  const filters = { kind: ctx.query.kind || undefined, updatedSince: updatedSinceOf(ctx.query.updatedSince) };
  // creatorRemoved is bound only when given: without it, the binding is the one cursors had before the filter existed.
  const request = crmListRequest('connectors', workspace.id, creatorRemoved === undefined ? filters : { ...filters, creatorRemoved }, sort, order, cursor);
  const page = await ctx.services.connectors.store.listConnectors(workspace.id, { sort, order, limit, ...filters, creatorRemoved, after: startAfter(ctx.services.cursors, request) });
  return { status: 200, body: listEnvelope(ctx.services.cursors, request, page) };
};
