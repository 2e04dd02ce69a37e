import type { WorkPlatformHandler } from '../operationContext.js';
import { versionFromIfMatch } from '../versions.js';

export const deleteWebhook: WorkPlatformHandler<'deleteWebhook'> = async (ctx) => {
  const { workspace } = ctx.caller;
  await ctx.services.webhooks.deleteWebhook(workspace.id, ctx.params.webhookId, versionFromIfMatch(ctx.headers['if-match']) ?? null);
  return { status: 204, body: undefined };
};
