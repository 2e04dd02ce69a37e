import type { Context } from 'openapi-backend';
import {
  claimKey,
  releaseKeyClaim,
  runIdempotently,
  storedAnswer,
  type IdempotencyDependencies,
  type IdempotentRequest,
  type KeyClaim,
  type StoredAnswer,
} from '../idempotency/idempotentCalls.js';
import { retryWhileBusy } from '../store/busyWrites.js';
import type { OperationRules } from './operationRules.js';
import type { Reply } from './reply.js';

/** How often a claim that could not be dropped (a busy store) is tried again. */
const CLAIM_RELEASE_RETRY_MS = 1_000;

/**
 * What the one look-up found under a keyed request's key: a stored answer to replay, or a fresh key
 * to run under (claimed first for a two-phase handler).
 */
export type KeyLookup = { replay: Reply } | { fresh: IdempotentRequest; claim?: KeyClaim };

/** The pipeline's idempotency step, made once per API. */
export interface IdempotencyStep<Caller> {
  /** The key a request of an idempotent operation carries, bound to its scope, method and path; undefined without one. */
  keyOf(rules: OperationRules, context: Context, caller: Caller | undefined): IdempotentRequest | undefined;
  /**
   * The key looked up once, in one store call. A two-phase handler, which waits outside the
   * database first, claims the key in the same call, so that a concurrent request with it is
   * refused rather than acting a second time; the caller releases the claim with `release`.
   */
  lookUp(keyed: IdempotentRequest, twoPhase: boolean): Promise<KeyLookup>;
  /** Runs a fresh key's change; its 2xx answer is stored in the change's own transaction (or a concurrent first request's answer replayed). */
  run(fresh: IdempotentRequest, act: () => Reply | Promise<Reply>): Promise<Reply>;
  /**
   * Drops a claim once its request has answered. While the store stays busy it is tried again in
   * the background for as long as the claim lives, so that a retry with the key is not refused for
   * the whole lease; at worst the claim lapses.
   */
  release(fresh: IdempotentRequest, claim: KeyClaim): Promise<void>;
}

export function idempotencyStep<Caller>(
  deps: IdempotencyDependencies | undefined,
  scopeOf: ((caller: Caller) => string) | undefined,
  pausesMs: readonly number[],
): IdempotencyStep<Caller> {
  return {
    keyOf(rules, context, caller) {
      const key = context.request.headers['idempotency-key'];
      if (!rules.idempotent || typeof key !== 'string' || caller === undefined) return undefined;
      const params = (context.request.params ?? {}) as Record<string, unknown>;
      const path = rules.path.replace(/\{([^}]+)\}/g, (template, name: string) =>
        typeof params[name] === 'string' ? encodeURIComponent(params[name]) : template,
      );
      return { scope: scopeOf!(caller), key, method: rules.method.toUpperCase(), path };
    },

    async lookUp(keyed, twoPhase) {
      if (twoPhase) {
        const claimed = await retryWhileBusy(() => claimKey(deps!, keyed), pausesMs);
        return 'stored' in claimed ? { replay: replayedReply(claimed.stored) } : { fresh: keyed, claim: claimed.claim };
      }
      const stored = await storedAnswer(deps!, keyed);
      return stored ? { replay: replayedReply(stored) } : { fresh: keyed };
    },

    async run(fresh, act) {
      const outcome = await runIdempotently(deps!, fresh, act, storedAnswerOf);
      return outcome.replayed ? replayedReply(outcome.answer) : outcome.result;
    },

    async release(fresh, claim) {
      const release = () => releaseKeyClaim(deps!, fresh, claim);
      try {
        await retryWhileBusy(release, pausesMs);
      } catch {
        const retry = () => {
          release().catch(() => {
            if (deps!.now() + CLAIM_RELEASE_RETRY_MS < claim.claimedUntil) setTimeout(retry, CLAIM_RELEASE_RETRY_MS).unref();
          });
        };
        setTimeout(retry, CLAIM_RELEASE_RETRY_MS).unref();
      }
    },
  };
}

/** What idempotency keeps of a reply: the body as the JSON text that is sent. */
function storedAnswerOf(reply: Reply): StoredAnswer {
  return { status: reply.status, headers: { ...reply.headers }, body: typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body) };
}

/** A stored answer sent again, marked as a replay. */
function replayedReply(answer: StoredAnswer): Reply {
  return {
    status: answer.status,
    headers: { ...answer.headers, 'content-type': 'application/json; charset=utf-8', 'idempotent-replayed': 'true' },
    body: answer.body,
  };
}
