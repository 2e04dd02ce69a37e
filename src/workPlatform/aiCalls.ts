// A provider call of the AI routes under the workspace's daily spend cap: reserve its upper bound
// first (refused with 429 when that would pass the cap), call the provider outside any transaction,
// and settle the actual cost in the commit step, the transaction that also stores the idempotent
// answer. A failure (502 or 504) is charged what the provider may have billed for it: nothing when
// the call never ran (unreachable, an error status), the usage it reported when its answer was
// unusable, the reserved bound when the request went out and no usable usage came back. Usage
// above the bound (a provider that ignored max_tokens) is charged at the bound and logged.
import type { components } from '../../generated/work-platform/types.js';
import { nextUtcMidnight, utcDayOf } from '../ai/calendar.js';
import { centsOf, costMillicents, MILLICENTS_PER_CENT, type AiPriceTable } from '../ai/pricing.js';
import { AiProviderFailure, type AiProvider, type AiTokenUsage, type PreparedAiCall } from '../ai/provider.js';
import type { Caller } from '../auth/bearerTokens.js';
import { retryWhileBusy } from '../store/busyWrites.js';
import type { AiSpendStore } from '../store/aiSpend.js';
import type { ProjectOpenWorkReader } from '../store/projectOpenWork.js';
import { effectiveLimits } from '../limits/workspaceLimits.js';
import type { Logger } from '../logger.js';
import { ApiProblem } from './problems.js';

/** What the AI routes use, built once at start-up. */
export interface AiServices {
  provider: AiProvider;
  /** Where anomalies of the provider are logged. */
  logger: Logger;
  prices: AiPriceTable;
  spend: AiSpendStore;
  openWork: ProjectOpenWorkReader;
}

export type AiUsage = components['schemas']['AiUsage'];

export interface ChargedAnswer<Result> {
  result: Result;
  /** The provider's token counts and what they cost. */
  usage: AiUsage;
  /** Replaces the reservation by the actual cost; run it in the commit step. */
  settle(): Promise<void>;
}

interface AiCallContext {
  requestId: string;
  caller: Caller;
  now: () => number;
  services: { ai: AiServices };
}

export async function chargedAiCall<Result>(ctx: AiCallContext, operation: string, call: PreparedAiCall<Result>): Promise<ChargedAnswer<Result>> {
  const { provider, prices, spend } = ctx.services.ai;
  const now = ctx.now();
  const capCents = effectiveLimits(ctx.caller.workspace).aiDailySpendCapCents.inForce;
  const estimateMillicents = costMillicents(call.bound, prices);
  const reservation = await retryWhileBusy(() =>
    spend.reserve({
      workspaceId: ctx.caller.workspace.id,
      day: utcDayOf(now),
      operation,
      model: provider.model,
      requestId: ctx.requestId,
      reservedMillicents: estimateMillicents,
      capMillicents: capCents === null ? null : capCents * MILLICENTS_PER_CENT,
    }),
  );
  if (!reservation.reserved) throw spendCapProblem(capCents ?? 0, reservation.spentMillicents, estimateMillicents, now);

  const charged = (usage: AiTokenUsage) => {
    const reported = costMillicents(usage, prices);
    if (reported > estimateMillicents) {
      ctx.services.ai.logger.warn('AI provider reported more usage than the call could use; charged at the bound', { requestId: ctx.requestId, usage, bound: call.bound });
    }
    return Math.min(reported, estimateMillicents);
  };
  let answer: Awaited<ReturnType<typeof call.run>>;
  try {
    answer = await call.run();
  } catch (error) {
    const charge = error instanceof AiProviderFailure ? error.charge : { kind: 'none' as const };
    // Should this write fail, the reservation counts at its bound until the day ends.
    await retryWhileBusy(async () => {
      if (charge.kind === 'none') await spend.release(reservation.entryId);
      else {
        const usage = charge.kind === 'usage' ? charge.usage : call.bound;
        await spend.settle(reservation.entryId, { actualMillicents: charge.kind === 'usage' ? charged(usage) : estimateMillicents, ...usage });
      }
    }).catch(() => undefined);
    throw error;
  }
  const actualMillicents = charged(answer.usage);
  return {
    result: answer.result,
    usage: { ...answer.usage, costCents: centsOf(actualMillicents) },
    settle: () => spend.settle(reservation.entryId, { actualMillicents, ...answer.usage }),
  };
}

function spendCapProblem(capCents: number, spentMillicents: number, estimateMillicents: number, now: number): ApiProblem {
  const resetAt = nextUtcMidnight(now);
  const leftCents = centsOf(Math.max(0, capCents * MILLICENTS_PER_CENT - spentMillicents));
  return new ApiProblem('ai-spend-cap-exceeded', {
    detail: `This call may cost up to ${centsOf(estimateMillicents)} cents, and the workspace has ${leftCents} of its ${capCents} cents of AI spend left today (UTC).`,
    headers: { 'retry-after': String(Math.max(1, Math.ceil((resetAt - now) / 1000))) },
    extensions: { aiSpend: { limitCents: capCents, usedCents: centsOf(spentMillicents), resetAt: new Date(resetAt).toISOString() } },
  });
}
