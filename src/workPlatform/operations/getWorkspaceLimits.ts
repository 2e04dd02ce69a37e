import { RATE_LIMIT_CLASSES } from '../../limits/planLimits.js';
import { monthlyQuotaOf, requestsPerWindow } from '../callLimits.js';
import { authenticated, type WorkPlatformHandler } from '../operationContext.js';

function limitValue<T>(override: T | null, planDefault: T): { inForce: T; planDefault: T; override: T | null } {
  return { inForce: override ?? planDefault, planDefault, override };
}

export const getWorkspaceLimits: WorkPlatformHandler<'getWorkspaceLimits'> = (ctx) => {
  const { workspace } = authenticated(ctx);
  const { planTable, quota } = ctx.services;
  const { plan, overrides } = workspace;
  const usage = quota.quotaUsage(workspace.id, ctx.now());
  const perClass = Object.fromEntries(
    RATE_LIMIT_CLASSES.map((rateClass) => [
      rateClass,
      { inForce: requestsPerWindow(planTable, workspace, rateClass), planDefault: planTable.requestsPerMinute[rateClass][plan], override: overrides[`${rateClass}PerMinute`] },
    ]),
  ) as Record<(typeof RATE_LIMIT_CLASSES)[number], { inForce: number; planDefault: number; override: number | null }>;
  return {
    status: 200,
    body: {
      workspaceId: workspace.id,
      plan,
      tier: planTable.tiers[plan],
      rateLimits: { windowMs: planTable.windowMs, ...perClass },
      monthlyQuota: {
        inForce: monthlyQuotaOf(planTable, workspace),
        planDefault: planTable.monthlyQuota[plan],
        override: overrides.monthlyQuota,
        usedThisMonth: usage.used,
        resetAt: new Date(usage.resetAt).toISOString(),
      },
      aiDailySpendCapCents: limitValue(overrides.aiDailySpendCapCents, planTable.aiDailySpendCapCents[plan]),
      webhookRetryDelaysSeconds: limitValue(overrides.webhookRetryDelaysSeconds, planTable.webhookRetryDelaysSeconds),
    },
  };
};
