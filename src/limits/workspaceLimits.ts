// What is in force for a workspace: its plan's values from the contract's plan table, each
// replaced by the workspace's own override where it has one (the store keeps the overrides).
import type { LimitOverrides, Workspace } from '../store/workspaces.js';
import { workPlatformPlanTable, type Plan, type RateLimitTier } from './planLimits.js';

/** The values a plan sets and a workspace may override. */
export interface LimitValues {
  readPerMinute: number;
  writePerMinute: number;
  aiPerMinute: number;
  /** Personal-access-token calls per UTC calendar month; null = uncapped. */
  monthlyQuota: number | null;
  /** US cents of AI spend per UTC day; null = uncapped. */
  aiDailySpendCapCents: number | null;
  /** Seconds to wait before each retry of a failed webhook delivery, in order. */
  webhookRetryDelaysSeconds: number[];
}
export type LimitName = keyof LimitValues & keyof LimitOverrides;

/** Per value: what is in force, what the plan says, and the workspace's override (or null). */
export type EffectiveLimits = { [K in LimitName]: { inForce: LimitValues[K]; planDefault: LimitValues[K]; override: LimitOverrides[K] } };

/** The `X-RateLimit-Tier` a plan reports (the contract's x-rate-limits.tiers). */
export function rateLimitTier(plan: Plan): RateLimitTier {
  return workPlatformPlanTable().tiers[plan];
}

/** A plan's values, from the contract's `x-rate-limits`. */
export function planDefaults(plan: Plan): LimitValues {
  const table = workPlatformPlanTable();
  return {
    readPerMinute: table.requestsPerMinute.read[plan],
    writePerMinute: table.requestsPerMinute.write[plan],
    aiPerMinute: table.requestsPerMinute.ai[plan],
    monthlyQuota: table.monthlyQuota[plan],
    aiDailySpendCapCents: table.aiDailySpendCapCents[plan],
    webhookRetryDelaysSeconds: [...table.webhookRetryDelaysSeconds],
  };
}

export function effectiveLimits(workspace: Pick<Workspace, 'plan' | 'overrides'>): EffectiveLimits {
  const defaults = planDefaults(workspace.plan);
  const entry = <K extends LimitName>(name: K) => {
    const override = workspace.overrides[name];
    return { inForce: (override ?? defaults[name]) as LimitValues[K], planDefault: defaults[name], override };
  };
  return {
    readPerMinute: entry('readPerMinute'),
    writePerMinute: entry('writePerMinute'),
    aiPerMinute: entry('aiPerMinute'),
    monthlyQuota: entry('monthlyQuota'),
    aiDailySpendCapCents: entry('aiDailySpendCapCents'),
    webhookRetryDelaysSeconds: entry('webhookRetryDelaysSeconds'),
  };
}
