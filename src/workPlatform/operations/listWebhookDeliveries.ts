import { listEnvelope, startAfter } from '../listPages.js';
import type { WorkPlatformHandler } from '../operationContext.js';

export const listWebhookDeliveries: WorkPlatformHandler<'listWebhookDeliveries'> = async (ctx) => {
  const { workspace } = ctx.caller;
  const { webhookId } = ctx.params;
  const { limit, cursor } = ctx.query;
  const status = ctx.query.status || undefined;
  const eventId = ctx.query.eventId || undefined;
  // The filters are part of the listing a cursor is bound to: another filter answers cursor-mismatch.
  const resource = `webhook-deliveries:${webhookId}:${status ?? '*'}:${eventId ?? '*'}`;
  const request = { resource, workspaceId: workspace.id, sort: 'createdAt', order: 'desc' as const, cursor: cursor || undefined };
  const page = await ctx.services.webhooks.listWebhookDeliveries(workspace.id, webhookId, {
    limit,
    status,
    eventId,
    after: startAfter(ctx.services.cursors, request),
  });
  return { status: 200, body: listEnvelope(ctx.services.cursors, request, page) };
};
