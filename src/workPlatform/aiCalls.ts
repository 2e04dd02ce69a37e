// A provider call of the AI routes under the workspace's daily spend cap: reserve its upper bound
// first (refused with 429 when that would pass the cap), call the provider outside any transaction
// (a failure releases the reservation: 502 or 504, costing nothing), and settle the actual cost in
// the commit step, the transaction that also stores the idempotent answer.
import type { components } from '../../generated/work-platform/types.js';
import { nextUtcMidnight, utcDayOf } from '../ai/calendar.js';
import { centsOf, costMillicents, MILLICENTS_PER_CENT, type AiPriceTable } from '../ai/pricing.js';
import { AiProviderFailure, type AiProvider, type PreparedAiCall } from '../ai/provider.js';
import type { Caller } from '../auth/bearerTokens.js';
import { retryWhileBusy } from '../contract/databaseBusy.js';
import type { AiSpendStore } from '../store/aiSpend.js';
import type { ProjectOpenWorkReader } from '../store/projectOpenWork.js';
import { effectiveLimits } from '../limits/workspaceLimits.js';
import { ApiProblem } from './problems.js';

/** What the AI routes use, built once at start-up. */
export interface AiServices {
  provider: AiProvider;
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
  settle(): void;
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

  let answer: Awaited<ReturnType<typeof call.run>>;
  try {
    answer = await call.run();
  } catch (error) {
    // A failed call costs nothing. Should the release itself fail, the reservation counts until the day ends.
    await retryWhileBusy(() => spend.release(reservation.entryId)).catch(() => undefined);
    throw error instanceof AiProviderFailure ? providerProblem(error) : error;
  }
  const actualMillicents = costMillicents(answer.usage, prices);
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

/** The provider's failure in the contract's words; its own message (address, status, body) goes only to the log, as the cause. */
function providerProblem(failure: AiProviderFailure): ApiProblem {
  switch (failure.kind) {
    case 'timeout':
      return new ApiProblem('ai-provider-timeout', {
        detail: 'The AI provider did not answer in time; nothing was charged. Retry later.',
        code: 'provider-timeout',
        cause: failure,
      });
    case 'status':
      return new ApiProblem('ai-provider-error', {
        detail: 'The AI provider answered with an error; nothing was charged. Retry later, quoting the request id if it persists.',
        code: 'provider-status',
        cause: failure,
      });
    case 'malformed-answer':
      return new ApiProblem('ai-provider-error', {
        detail: "The AI provider's answer could not be used; nothing was charged. Retry later, quoting the request id if it persists.",
        code: 'provider-malformed-answer',
        cause: failure,
      });
    case 'unreachable':
      return new ApiProblem('ai-provider-error', {
        detail: 'The AI provider could not be reached; nothing was charged. Retry later.',
        code: 'provider-unreachable',
        cause: failure,
      });
  }
}
