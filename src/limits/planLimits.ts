// The plan table of the Work-Platform contract (`x-rate-limits`): which plans, rate-limit classes
// and tiers exist is generated from it (rules.ts); the values are checked here once, at start-up.
import { planLimitTable, plans, rateLimitClasses, rateLimitTiers, type Plan, type RateLimitClass, type RateLimitTier } from '../../generated/work-platform/rules.js';

export type { Plan, RateLimitClass, RateLimitTier };

export interface PlanLimitTable {
  windowMs: number;
  tiers: Record<Plan, RateLimitTier>;
  requestsPerMinute: Record<RateLimitClass, Record<Plan, number>>;
  /** Null: uncapped. */
  monthlyQuota: Record<Plan, number | null>;
  aiDailySpendCapCents: Record<Plan, number | null>;
  webhookRetryDelaysSeconds: number[];
}

export class PlanTableError extends Error {}

function record<V>(source: unknown, where: string, isValue: (value: unknown) => value is V, keys: readonly string[]): Record<string, V> {
  if (!source || typeof source !== 'object') throw new PlanTableError(`x-rate-limits.${where} must be an object`);
  const out: Record<string, V> = {};
  for (const key of keys) {
    const value = (source as Record<string, unknown>)[key];
    if (!isValue(value)) throw new PlanTableError(`x-rate-limits.${where}.${key} is missing or not valid`);
    out[key] = value;
  }
  return out;
}

const isCount = (value: unknown): value is number => Number.isInteger(value) && (value as number) >= 0;
const isCountOrNull = (value: unknown): value is number | null => value === null || isCount(value);
const isTier = (value: unknown): value is RateLimitTier => (rateLimitTiers as readonly unknown[]).includes(value);

/** Reads and checks a document's `x-rate-limits`; a malformed table stops the start-up with its path. */
export function readPlanLimitTable(document: Record<string, unknown>): PlanLimitTable {
  const table = document['x-rate-limits'] as Record<string, unknown> | undefined;
  if (!table) throw new PlanTableError('the document has no x-rate-limits');
  if (!isCount(table.windowMs) || table.windowMs === 0) throw new PlanTableError('x-rate-limits.windowMs must be a positive integer');
  const perMinute = table.requestsPerMinute as Record<string, unknown> | undefined;
  const delays = table.webhookRetryDelaysSeconds;
  if (!Array.isArray(delays) || delays.length === 0 || !delays.every(isCount)) {
    throw new PlanTableError('x-rate-limits.webhookRetryDelaysSeconds must be a non-empty list of seconds');
  }
  return {
    windowMs: table.windowMs,
    tiers: record(table.tiers, 'tiers', isTier, plans) as Record<Plan, RateLimitTier>,
    requestsPerMinute: Object.fromEntries(
      rateLimitClasses.map((rateClass) => [rateClass, record(perMinute?.[rateClass], `requestsPerMinute.${rateClass}`, isCount, plans)]),
    ) as Record<RateLimitClass, Record<Plan, number>>,
    monthlyQuota: record(table.monthlyQuota, 'monthlyQuota', isCountOrNull, plans) as Record<Plan, number | null>,
    aiDailySpendCapCents: record(table.aiDailySpendCapCents, 'aiDailySpendCapCents', isCountOrNull, plans) as Record<Plan, number | null>,
    webhookRetryDelaysSeconds: delays as number[],
  };
}

let workPlatformTable: PlanLimitTable | undefined;

/**
 * The Work-Platform plan table as the contract states it (`x-rate-limits`, generated into
 * rules.ts), checked once. The one place the plan values come from: the limits, the CLI and the API all use it.
 */
export function workPlatformPlanTable(): PlanLimitTable {
  workPlatformTable ??= readPlanLimitTable({ 'x-rate-limits': planLimitTable });
  return workPlatformTable;
}
