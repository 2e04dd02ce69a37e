import type { IdempotencyClaimStore } from '../store/idempotencyClaims.js';
import type { IdempotencyKeyStore } from '../store/idempotencyKeys.js';
import type { StoreEngine } from '../store/engine.js';
import { ServiceError } from '../serviceError.js';

/** An answer as it is kept under a key and sent again on a replay. */
export interface StoredAnswer {
  status: number;
  /** Response headers to send again, e.g. Location and ETag. */
  headers: Record<string, string>;
  /** The body exactly as first sent (JSON text). */
  body: string;
}

/** What running a request under its key came to: the action's own result, or the answer stored by an earlier request. */
export type IdempotentOutcome<T> = { replayed: false; result: T } | { replayed: true; answer: StoredAnswer };

/** Seals and opens stored answer bodies (the webhook secret box): some answers carry a signing secret. */
export interface AnswerBox {
  seal(plaintext: string, context: string): string;
  open(sealed: string, context: string): string;
}

export interface IdempotencyDependencies {
  store: IdempotencyKeyStore;
  /** The store engine's transactions: a request's change and its stored answer commit in one. */
  transactions: Pick<StoreEngine, 'write' | 'read'>;
  /**
   * Seals every stored answer body: some answers (a new webhook and a key rotation) carry a
   * signing secret, which must never be written in plaintext, and a replay must still return it.
   */
  answerBox: AnswerBox;
  now: () => number;
  /**
   * Claims on keys whose first request runs outside a transaction (a two-phase operation, which
   * waits for an outside service), and how long a claim lasts when its process dies mid-request.
   */
  claims?: { store: IdempotencyClaimStore; leaseMs: number };
}

/** One use of a key: the caller's scope (a workspace), the key, and the request it was sent with. */
export interface IdempotentRequest {
  scope: string;
  key: string;
  method: string;
  /** The path with its parameters filled in: a key used on one resource is not replayed for another. */
  path: string;
}

/** The key was first used for another request; the API words it in its own vocabulary. */
export class IdempotencyKeyReusedError extends ServiceError {
  readonly kind = 'idempotency-key-reused';
  constructor(
    readonly firstMethod: string,
    readonly firstPath: string,
  ) {
    super(`idempotency key first used for ${firstMethod} ${firstPath}`);
  }
}

/** The first request with the key is still running (a two-phase operation); the API words it in its own vocabulary. */
export class IdempotencyKeyInUseError extends ServiceError {
  readonly kind = 'idempotency-key-in-use';
}

/** The stored answer cannot be opened any more (the server's sealing key was replaced). */
export class IdempotentAnswerUnreadableError extends ServiceError {
  readonly kind = 'idempotent-answer-unreadable';
}

/**
 * Runs a request whose key was looked up once and found fresh (`storedAnswer`, or `claimKey` for a
 * two-phase operation): the stored answer, the resource and its outbox row are written in one
 * transaction. Only 2xx answers are stored (`answerOf` says what the action's result answered); a
 * failure rolls everything back and the key can be retried.
 *
 * The key is not looked up again inside the transaction, on either engine: on PostgreSQL a look-up
 * inside a SERIALIZABLE transaction would lock the index page the key falls on, and every
 * concurrent keyed request inserting its own key there would conflict with it (80% of the
 * serialization failures of concurrent task creation, in the bench); on SQLite it would be a
 * second look-up for every fresh request. Requests with one key that run at once may then each
 * act, and only the first to commit keeps its change. Any other one fails to save its answer (the
 * key is stored), or is refused by what the first one changed (a contract already sent, a version
 * that moved on): it rolls back, looks the key up again, and replays the first one's answer.
 */
export async function runIdempotently<T>(
  deps: IdempotencyDependencies,
  request: IdempotentRequest,
  act: () => T | Promise<T>,
  answerOf: (result: T) => StoredAnswer,
): Promise<IdempotentOutcome<T>> {
  let saved = false;
  let result: T;
  try {
    result = await deps.transactions.write(async (): Promise<T> => {
      saved = false;
      const now = deps.now();
      const acted = await act();
      const answer = answerOf(acted);
      if (answer.status >= 200 && answer.status < 300) {
        await deps.store.saveIdempotencyRecord({
          workspaceId: request.scope,
          key: request.key,
          method: request.method,
          path: request.path,
          status: answer.status,
          headers: { ...answer.headers },
          body: deps.answerBox.seal(answer.body, answerContext(request)),
          now,
        });
        saved = true;
      }
      return acted;
    });
  } catch (error) {
    if (error instanceof IdempotencyKeyReusedError) throw error;
    const stored = await storedAnswerAfterwards(deps, request);
    if (stored) return { replayed: true, answer: stored };
    throw error;
  }
  if (saved) return { replayed: false, result };
  const stored = await storedAnswerAfterwards(deps, request);
  return stored ? { replayed: true, answer: stored } : { replayed: false, result };
}

/**
 * The look-up after a request failed or answered non-2xx: the stored answer of a concurrent first
 * request, or undefined. A look-up that fails for another reason than the key's own (the database
 * busy or gone) leaves the request's own answer or error to be sent, rather than its failure.
 */
async function storedAnswerAfterwards(deps: IdempotencyDependencies, request: IdempotentRequest): Promise<StoredAnswer | undefined> {
  try {
    return await storedAnswer(deps, request);
  } catch (error) {
    if (error instanceof IdempotencyKeyReusedError || error instanceof IdempotentAnswerUnreadableError) throw error;
    return undefined;
  }
}

/**
 * For a request that runs outside a transaction before it commits (a two-phase operation): in one
 * transaction, the stored answer when there is one, else a claim on the key, so that a concurrent
 * request with the key is refused (`IdempotencyKeyInUseError`) rather than acting a second time.
 * Returns the stored answer, or the claim taken; the caller releases its claim with
 * `releaseKeyClaim` when it has answered, whatever the answer.
 */
export async function claimKey(deps: IdempotencyDependencies, request: IdempotentRequest): Promise<{ stored: StoredAnswer } | { claim: KeyClaim }> {
  const claims = deps.claims;
  if (!claims) throw new Error('two-phase idempotent operations need an idempotency claim store');
  return deps.transactions.write(async () => {
    const now = deps.now();
    const stored = await storedAnswer(deps, request, now);
    if (stored) return { stored };
    const claim = { claimedUntil: now + claims.leaseMs };
    const claimed = await claims.store.claimIdempotencyKey({ workspaceId: request.scope, key: request.key, now, claimedUntil: claim.claimedUntil });
    if (!claimed) throw new IdempotencyKeyInUseError(`idempotency key ${request.key} is held by a request still running`);
    return { claim };
  });
}

/** A claim on a key, told apart from a later one (after this one lapsed) by when it ends. */
export interface KeyClaim {
  claimedUntil: number;
}

export async function releaseKeyClaim(deps: IdempotencyDependencies, request: IdempotentRequest, claim: KeyClaim): Promise<void> {
  const claims = deps.claims;
  if (claims) await deps.transactions.write(() => claims.store.releaseIdempotencyClaim(request.scope, request.key, claim.claimedUntil));
}

/**
 * The stored answer of an earlier request with this key; undefined when the key is new. The same
 * key on another request is an `IdempotencyKeyReusedError`; an answer sealed with a replaced key is
 * an `IdempotentAnswerUnreadableError`.
 */
export async function storedAnswer(deps: IdempotencyDependencies, request: IdempotentRequest, now = deps.now()): Promise<StoredAnswer | undefined> {
  // Outside a transaction, wait for one open on the connection: its answer is not stored until it commits.
  const stored = await deps.transactions.read(() => deps.store.findIdempotencyRecord(request.scope, request.key, now));
  if (!stored) return undefined;
  if (stored.method !== request.method || stored.path !== request.path) throw new IdempotencyKeyReusedError(stored.method, stored.path);
  return {
    status: stored.status,
    headers: { ...stored.headers },
    // A JSON body was stored before answers were sealed; it holds no secret (none was issued then).
    body: stored.body.startsWith('{') ? stored.body : openAnswer(deps, stored.body, request),
  };
}

function openAnswer(deps: IdempotencyDependencies, sealed: string, request: IdempotentRequest): string {
  try {
    return deps.answerBox.open(sealed, answerContext(request));
  } catch (error) {
    throw new IdempotentAnswerUnreadableError('the stored answer cannot be opened with the current key', { cause: error });
  }
}

/** A sealed answer opens only for the scope and key it was stored under. */
export function answerContext(request: Pick<IdempotentRequest, 'scope' | 'key'>): string {
  return `idempotent-answer:${request.scope}:${request.key}`;
}
