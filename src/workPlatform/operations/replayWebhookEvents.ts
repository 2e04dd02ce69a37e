import type { WorkPlatformHandler } from '../operationContext.js';

export const replayWebhookEvents: WorkPlatformHandler<'replayWebhookEvents'> = async (ctx) => {
  const { workspace } = ctx.caller;
  return { status: 202, body: await ctx.services.webhooks.replayWebhookEvents(workspace.id, ctx.params.webhookId, ctx.body) };
};
