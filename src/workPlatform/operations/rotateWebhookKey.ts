import type { WorkPlatformHandler } from '../operationContext.js';

export const rotateWebhookKey: WorkPlatformHandler<'rotateWebhookKey'> = async (ctx) => {
  const { workspace } = ctx.caller;
  return { status: 200, body: await ctx.services.webhooks.rotateWebhookKey(workspace.id, ctx.params.webhookId) };
};
