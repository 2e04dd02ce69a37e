import { listEnvelope, startAfter } from '../listPages.js';
import type { WorkPlatformHandler } from '../operationContext.js';

export const listWebhooks: WorkPlatformHandler<'listWebhooks'> = async (ctx) => {
  const { workspace } = ctx.caller;
  const { limit, cursor } = ctx.query;
  const request = { resource: 'webhooks', workspaceId: workspace.id, sort: 'createdAt', order: 'desc' as const, cursor: cursor || undefined };
  const page = await ctx.services.webhooks.listWebhooks(workspace.id, { limit, after: startAfter(ctx.services.cursors, request) });
  return { status: 200, body: listEnvelope(ctx.services.cursors, request, page) };
};
