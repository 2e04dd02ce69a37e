import type { Admission } from '../contract/pipeline.js';
import type { PlanLimitTable, RateLimitClass } from '../limits/planLimits.js';
import type { LocalQuotaCounts } from '../limits/localQuotaCounts.js';
import type { RateLimitDecision, RateLimiter } from '../limits/rateLimiter.js';
import type { SharedCallCounter } from '../limits/sharedCallCounter.js';
import type { QuotaCounterStore, QuotaDecision } from '../store/quotaCounters.js';
import { effectiveLimits, rateLimitTier } from '../limits/workspaceLimits.js';
import type { Caller } from '../auth/bearerTokens.js';
import { ApiProblem } from './problems.js';

/** Counts monthly token calls in the SQLite file; on PostgreSQL or Redis the SharedCallCounter counts them. */
export type QuotaCounter = Pick<QuotaCounterStore, 'countQuotaCall'>;

/**
 * The rate limit of the operation's class (every caller) and the monthly quota (token callers:
 * PATs and OAuth access tokens; never the signed-in application's sessions), in that order and in
 * one write transaction (one commit per call); far from both limits, in this process alone (the
 * rate limiter's countLocally, LocalQuotaCounts), written with a later call. Returns the headers
 * every limited answer carries, and the 429 problem when the call is refused.
 */
export function enforceCallLimits(
  deps: { table: PlanLimitTable; rateLimiter: RateLimiter; quota: QuotaCounter; localQuota: LocalQuotaCounts; now: number },
  caller: Caller,
  rateClass: RateLimitClass,
  units = 1,
): Admission {
  const { table } = deps;
  const { workspace } = caller;
  const { limit, bucket, countsQuota, quotaLimit } = callLimitsOf(caller, rateClass);
  // Far from both limits the call is counted in this process alone; the quota is asked first, as asking the rate limiter counts.
  const local =
    !countsQuota || deps.localQuota.mayCountLocally(workspace.id, deps.now, quotaLimit)
      ? deps.rateLimiter.countLocally(bucket, limit, table.windowMs, units)
      : undefined;
  let decision: RateLimitDecision;
  let quota: QuotaDecision | undefined;
  if (local) {
    decision = local;
    quota = countsQuota ? deps.localQuota.countLocally(workspace.id, deps.now, quotaLimit) : undefined;
  } else {
    const earlierCalls = countsQuota ? deps.localQuota.unwrittenFor(workspace.id, deps.now) : 0;
    ({ decision, quota } = deps.rateLimiter.countTogether(
      () => {
        const decision = deps.rateLimiter.consume(bucket, limit, table.windowMs, units);
        // A call refused by the rate limit, or made with a session, does not count against the quota.
        const quota = decision.allowed && countsQuota ? deps.quota.countQuotaCall(workspace.id, deps.now, quotaLimit, earlierCalls) : undefined;
        return { decision, quota };
      },
      // While another process holds the write lock: this process's estimate, and no quota count (documented in the spec).
      () => ({ decision: deps.rateLimiter.estimate(bucket, limit, table.windowMs, units), quota: undefined }),
    ));
    if (quota) deps.localQuota.written(workspace.id, quota, earlierCalls, deps.now);
  }
  return limitAdmission(table, caller, rateClass, limit, decision, quota, deps.now);
}

/** enforceCallLimits with the counts in a shared counter (Redis, or PostgreSQL's tables): every call counted there, exactly. */
export async function enforceSharedCallLimits(
  deps: { table: PlanLimitTable; counter: SharedCallCounter; now: number },
  caller: Caller,
  rateClass: RateLimitClass,
  units = 1,
): Promise<Admission> {
  const { workspace } = caller;
  const { limit, bucket, countsQuota, quotaLimit } = callLimitsOf(caller, rateClass);
  const { decision, quota } = await deps.counter.countCall({
    owner: workspace.id,
    bucket,
    limit,
    windowMs: deps.table.windowMs,
    units,
    // The ai class is counted call by call: its figures guard spend, not load.
    exact: rateClass === 'ai',
    quota: countsQuota ? { workspaceId: workspace.id, limit: quotaLimit } : undefined,
  });
  return limitAdmission(deps.table, caller, rateClass, limit, decision, quota, deps.now);
}

function callLimitsOf(caller: Caller, rateClass: RateLimitClass) {
  const { workspace } = caller;
  const limits = effectiveLimits(workspace);
  return {
    limit: limits[`${rateClass}PerMinute`].inForce,
    bucket: `wp:${workspace.id}:${rateClass}`,
    countsQuota: caller.kind !== 'session',
    quotaLimit: limits.monthlyQuota.inForce,
  };
}

/** The headers of a counted call, and its 429 problem when the bucket or the quota refuses it. */
function limitAdmission(
  table: PlanLimitTable,
  caller: Caller,
  rateClass: RateLimitClass,
  limit: number,
  decision: RateLimitDecision,
  quota: QuotaDecision | undefined,
  now: number,
): Admission {
  const tier = rateLimitTier(caller.workspace.plan);
  const windowSeconds = Math.round(table.windowMs / 1000);
  const secondsToReset = Math.max(0, decision.resetAtSeconds - Math.floor(now / 1000));
  const headers: Record<string, string> = {
    'x-ratelimit-class': rateClass,
    'x-ratelimit-limit': String(limit),
    'x-ratelimit-remaining': String(decision.remaining),
    'x-ratelimit-reset': String(decision.resetAtSeconds),
    'x-ratelimit-window-ms': String(table.windowMs),
    'x-ratelimit-tier': tier,
    'ratelimit-policy': `"${rateClass}";q=${limit};w=${windowSeconds}`,
    ratelimit: `"${rateClass}";r=${decision.remaining};t=${secondsToReset}`,
  };
  if (!decision.allowed) {
    return { headers, refusal: new ApiProblem('rate-limited', {
      detail: `The ${rateClass} bucket of this workspace allows ${limit} units per ${windowSeconds} seconds (a call counts 1, an expensive one its x-ratelimit-cost).`,
      headers: { ...headers, 'retry-after': String(decision.retryAfterSeconds) },
      extensions: {
        rateLimit: { class: rateClass, limit, windowMs: table.windowMs, retryAfterSec: decision.retryAfterSeconds, tier },
      },
    }) };
  }
  if (quota === undefined || quota.limit === null) return { headers };
  Object.assign(headers, {
    'x-quota-limit': String(quota.limit),
    'x-quota-remaining': String(quota.remaining ?? 0),
    'x-quota-reset': String(Math.floor(quota.resetAt / 1000)),
  });
  if (!quota.allowed) {
    const retryAfter = Math.max(1, Math.ceil((quota.resetAt - now) / 1000));
    return { headers, refusal: new ApiProblem('quota-exceeded', {
      detail: `This workspace has used its ${quota.limit} token calls for this month.`,
      headers: { ...headers, 'retry-after': String(retryAfter) },
      extensions: { quota: { period: 'month', limit: quota.limit, used: quota.used, resetAt: new Date(quota.resetAt).toISOString() } },
    }) };
  }
  return { headers };
}
