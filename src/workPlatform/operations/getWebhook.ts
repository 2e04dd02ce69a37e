import { ApiProblem } from '../problems.js';
import type { WorkPlatformHandler } from '../operationContext.js';
import { etagOf } from '../versions.js';

export const getWebhook: WorkPlatformHandler<'getWebhook'> = async (ctx) => {
  const { workspace } = ctx.caller;
  const webhook = await ctx.services.webhooks.getWebhook(workspace.id, ctx.params.webhookId);
  if (!webhook) throw new ApiProblem('not-found', { detail: `No webhook subscription ${ctx.params.webhookId} in this workspace.`, code: 'webhook-not-found' });
  return { status: 200, headers: { etag: etagOf(webhook.version) }, body: webhook };
};
