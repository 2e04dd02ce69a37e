import type { WorkPlatformHandler } from '../operationContext.js';
import { etagOf, requiredVersion } from '../versions.js';

export const updateWebhook: WorkPlatformHandler<'updateWebhook'> = async (ctx) => {
  const { workspace } = ctx.caller;
  const expectedVersion = requiredVersion(ctx.headers['if-match']);
  const webhook = await ctx.services.webhooks.updateWebhook(workspace.id, ctx.params.webhookId, ctx.body, expectedVersion);
  return { status: 200, headers: { etag: etagOf(webhook.version) }, body: webhook };
};
