import { effectiveLimits, rateLimitTier } from '../../limits/workspaceLimits.js';
import type { WorkPlatformHandler } from '../operationContext.js';

export const getWorkspaceLimits: WorkPlatformHandler<'getWorkspaceLimits'> = (ctx) => {
  const { workspace } = ctx.caller;
  const limits = effectiveLimits(workspace);
  const usage = ctx.services.quota.quotaUsage(workspace.id, ctx.now());
  return {
    status: 200,
    body: {
      workspaceId: workspace.id,
      plan: workspace.plan,
      tier: rateLimitTier(workspace.plan),
      rateLimits: {
        windowMs: ctx.services.planTable.windowMs,
        read: limits.readPerMinute,
        write: limits.writePerMinute,
        ai: limits.aiPerMinute,
      },
      monthlyQuota: { ...limits.monthlyQuota, usedThisMonth: usage.used, resetAt: new Date(usage.resetAt).toISOString() },
      aiDailySpendCapCents: limits.aiDailySpendCapCents,
      webhookRetryDelaysSeconds: limits.webhookRetryDelaysSeconds,
    },
  };
};
