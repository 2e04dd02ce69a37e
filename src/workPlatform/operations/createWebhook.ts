import type { WorkPlatformHandler } from '../operationContext.js';
import { createdHeaders } from '../versions.js';

export const createWebhook: WorkPlatformHandler<'createWebhook'> = async (ctx) => {
  const { workspace, userId } = ctx.caller;
  const { webhook, secret } = await ctx.services.webhooks.createWebhook(workspace.id, ctx.body, { createdBy: userId });
  return {
    status: 201,
    headers: createdHeaders('createWebhook', webhook),
    body: { ...webhook, secret },
  };
};
