import { effectiveLimits, rateLimitTier } from '../../limits/workspaceLimits.js';
import { nextUtcMidnight, utcDayOf } from '../../ai/calendar.js';
import { centsOf } from '../../ai/pricing.js';
import { twoPhaseHandler, type WorkPlatformTwoPhaseHandler } from '../operationContext.js';

// Two-phase: the month's quota count may come from Redis (REDIS_URL), read before the answer is built.
export const getWorkspaceLimits: WorkPlatformTwoPhaseHandler<'getWorkspaceLimits'> = twoPhaseHandler(async (ctx) => {
  const { workspace } = ctx.caller;
  const limits = effectiveLimits(workspace);
  const now = ctx.now();
  const usage = await ctx.services.quota.quotaUsage(workspace.id, now);
  return async () => {
    const aiSpentMillicents = await ctx.services.ai.spend.spentOnDay(workspace.id, utcDayOf(now));
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
        aiDailySpendCapCents: {
          ...limits.aiDailySpendCapCents,
          usedTodayCents: centsOf(aiSpentMillicents),
          resetAt: new Date(nextUtcMidnight(now)).toISOString(),
        },
        webhookRetryDelaysSeconds: limits.webhookRetryDelaysSeconds,
      },
    };
  };
});
