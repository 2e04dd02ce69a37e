import { describe, expect, it } from 'vitest';
import { plans } from '../../generated/work-platform/rules.js';
import { effectiveLimits, planDefaults, rateLimitTier } from '../../src/limits/workspaceLimits.js';
import { workPlatformPlanTable } from '../../src/limits/planLimits.js';
import type { LimitOverrides } from '../../src/store/workspaces.js';

const planDefaultRetryDelays = workPlatformPlanTable().webhookRetryDelaysSeconds;

const noOverrides: LimitOverrides = {
  readPerMinute: null,
  writePerMinute: null,
  aiPerMinute: null,
  monthlyQuota: null,
  aiDailySpendCapCents: null,
  webhookRetryDelaysSeconds: null,
};

describe('plan table', () => {
  it('has the seed\'s rate limits per tier and our quota, AI spend cap and retry schedule per plan', () => {
    expect(plans.map((plan) => [plan, rateLimitTier(plan), planDefaults(plan)])).toEqual([
      ['free', 'free', { readPerMinute: 300, writePerMinute: 60, aiPerMinute: 20, monthlyQuota: 10_000, aiDailySpendCapCents: 500, webhookRetryDelaysSeconds: [30, 120, 600, 1800, 7200, 28800, 86400] }],
      ['pro', 'pro', { readPerMinute: 1200, writePerMinute: 300, aiPerMinute: 60, monthlyQuota: 100_000, aiDailySpendCapCents: 5_000, webhookRetryDelaysSeconds: [30, 120, 600, 1800, 7200, 28800, 86400] }],
      ['team', 'pro', { readPerMinute: 1200, writePerMinute: 300, aiPerMinute: 60, monthlyQuota: 250_000, aiDailySpendCapCents: 20_000, webhookRetryDelaysSeconds: [30, 120, 600, 1800, 7200, 28800, 86400] }],
      ['business', 'pro', { readPerMinute: 1200, writePerMinute: 300, aiPerMinute: 60, monthlyQuota: 1_000_000, aiDailySpendCapCents: 100_000, webhookRetryDelaysSeconds: [30, 120, 600, 1800, 7200, 28800, 86400] }],
      ['enterprise', 'enterprise', { readPerMinute: 6000, writePerMinute: 1500, aiPerMinute: 300, monthlyQuota: null, aiDailySpendCapCents: null, webhookRetryDelaysSeconds: [30, 120, 600, 1800, 7200, 28800, 86400] }],
    ]);
    // The schedule spans about 35 hours, as the seed says.
    expect(planDefaultRetryDelays.reduce((sum, delay) => sum + delay, 0) / 3600).toBeCloseTo(34.7, 1);
  });

  it('hands out copies, so that a caller cannot change the table', () => {
    planDefaults('free').webhookRetryDelaysSeconds.push(1);
    expect(planDefaults('free').webhookRetryDelaysSeconds).toHaveLength(7);
  });
});

describe('effectiveLimits', () => {
  it('puts each override in force over the plan value, and leaves the others at the plan', () => {
    const overrides: LimitOverrides = { ...noOverrides, readPerMinute: 5, monthlyQuota: 0, aiDailySpendCapCents: 42, webhookRetryDelaysSeconds: [10, 60] };
    const limits = effectiveLimits({ plan: 'free', overrides });
    expect(limits.readPerMinute).toEqual({ inForce: 5, planDefault: 300, override: 5 });
    expect(limits.writePerMinute).toEqual({ inForce: 60, planDefault: 60, override: null });
    expect(limits.aiPerMinute).toEqual({ inForce: 20, planDefault: 20, override: null });
    expect(limits.monthlyQuota).toEqual({ inForce: 0, planDefault: 10_000, override: 0 });
    expect(limits.aiDailySpendCapCents).toEqual({ inForce: 42, planDefault: 500, override: 42 });
    expect(limits.webhookRetryDelaysSeconds).toEqual({ inForce: [10, 60], planDefault: [...planDefaultRetryDelays], override: [10, 60] });
  });

  it('reports an enterprise workspace as uncapped unless overridden', () => {
    expect(effectiveLimits({ plan: 'enterprise', overrides: noOverrides }).monthlyQuota).toEqual({ inForce: null, planDefault: null, override: null });
    expect(effectiveLimits({ plan: 'enterprise', overrides: { ...noOverrides, monthlyQuota: 50 } }).monthlyQuota).toEqual({ inForce: 50, planDefault: null, override: 50 });
  });
});
