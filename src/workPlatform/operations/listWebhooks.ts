import { listEnvelope, startAfter } from '../listPages.js';
import type { WorkPlatformHandler } from '../operationContext.js';

export const listWebhooks: WorkPlatformHandler<'listWebhooks'> = async (ctx) => {
  const { workspace } = ctx.caller;
  const { limit, cursor, creatorRemoved } = ctx.query;
  // The filter is bound into the cursor; without it the binding is the one cursors had before the filter existed.
  const resource = creatorRemoved === undefined ? 'webhooks' : `webhooks?creatorRemoved=${creatorRemoved}`;
  const request = { resource, workspaceId: workspace.id, sort: 'createdAt', order: 'desc' as const, cursor: cursor || undefined };
  const page = await ctx.services.webhooks.listWebhooks(workspace.id, { limit, creatorRemoved, after: startAfter(ctx.services.cursors, request) });
  return { status: 200, body: listEnvelope(ctx.services.cursors, request, page) };
};
