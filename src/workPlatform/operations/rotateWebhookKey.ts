import type { WorkPlatformHandler } from '../operationContext.js';

export const rotateWebhookKey: WorkPlatformHandler<'rotateWebhookKey'> = (ctx) => {
  const { workspace } = ctx.caller;
  return { status: 200, body: ctx.services.webhooks.rotateWebhookKey(workspace.id, ctx.params.webhookId) };
};
