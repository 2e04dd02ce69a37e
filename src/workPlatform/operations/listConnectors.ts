import { crmListRequest, updatedSinceOf } from '../crmLists.js';
import { listEnvelope, startAfter } from '../listPages.js';
import type { WorkPlatformHandler } from '../operationContext.js';

export const listConnectors: WorkPlatformHandler<'listConnectors'> = async (ctx) => {
  const { workspace } = ctx.caller;
  const { sort, order, limit, cursor } = ctx.query;
  const filters = { kind: ctx.query.kind || undefined, updatedSince: updatedSinceOf(ctx.query.updatedSince) };
  const request = crmListRequest('connectors', workspace.id, filters, sort, order, cursor);
  const page = await ctx.services.connectors.store.listConnectors(workspace.id, { sort, order, limit, ...filters, after: startAfter(ctx.services.cursors, request) });
  return { status: 200, body: listEnvelope(ctx.services.cursors, request, page) };
};
