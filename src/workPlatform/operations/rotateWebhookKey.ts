import { authenticated, type WorkPlatformHandler } from '../operationContext.js';

export const rotateWebhookKey: WorkPlatformHandler<'rotateWebhookKey'> = (ctx) => {
  const { workspace } = authenticated(ctx);
  return { status: 200, body: ctx.services.webhooks.rotateWebhookKey(workspace.id, ctx.params.webhookId) };
};
