import type { Reply } from '../contract/reply.js';
import type { IdempotencyKeyStore } from '../store/idempotencyKeys.js';
import type { SecretBox } from '../webhooks/secretBox.js';
import { ApiProblem } from './problems.js';

export interface IdempotencyDependencies {
  store: IdempotencyKeyStore;
  /** Runs a function in one BEGIN IMMEDIATE transaction. */
  inTransaction: <T>(fn: () => T) => T;
  /**
   * Seals every stored answer body: some answers (a new webhook and a key rotation) carry a
   * signing secret, which must never be written in plaintext, and a replay must still return it.
   */
  answerBox: SecretBox;
  now: () => number;
}

/**
 * Runs a POST under its `Idempotency-Key`: the stored answer, the resource and its outbox row are
 * written in one transaction that holds the write lock from its start, so a concurrent request
 * with the same key (from any process) waits and then replays instead of acting again. Only 2xx
 * answers are stored; a failure rolls everything back and the key can be retried.
 */
export interface IdempotentRequest {
  workspaceId: string;
  key: string;
  method: string;
  path: string;
}

export function runIdempotently(deps: IdempotencyDependencies, request: IdempotentRequest, act: () => Reply): Reply {
  try {
    return inOneTransaction(deps, request, act);
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_BUSY') {
      throw new ApiProblem('conflict', {
        detail: 'Another request with this Idempotency-Key is still being processed; retry shortly to get its answer.',
        code: 'idempotency-key-in-use',
      });
    }
    throw error;
  }
}

function inOneTransaction(
  deps: IdempotencyDependencies,
  request: IdempotentRequest,
  act: () => Reply,
): Reply {
  return deps.inTransaction(() => {
    const now = deps.now();
    const stored = storedAnswer(deps, request, now);
    if (stored) return stored;
    const reply = act();
    if (reply.status >= 200 && reply.status < 300) {
      deps.store.saveIdempotencyRecord({
        ...request,
        status: reply.status,
        headers: { ...reply.headers },
        body: deps.answerBox.seal(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body), answerContext(request)),
        now,
      });
    }
    return reply;
  });
}

/**
 * The stored answer of an earlier request with this key, ready to send again; undefined when the
 * key is new. The same key on another operation is a conflict.
 */
export function storedAnswer(deps: IdempotencyDependencies, request: IdempotentRequest, now = deps.now()): Reply | undefined {
  const stored = deps.store.findIdempotencyRecord(request.workspaceId, request.key, now);
  if (!stored) return undefined;
  if (stored.method !== request.method || stored.path !== request.path) {
    throw new ApiProblem('conflict', {
      detail: `This Idempotency-Key was used for ${stored.method} ${stored.path}; use a new key for this request.`,
      code: 'idempotency-key-reused',
    });
  }
  return {
    status: stored.status,
    headers: { ...stored.headers, 'content-type': 'application/json; charset=utf-8', 'idempotent-replayed': 'true' },
    // A JSON body was stored before answers were sealed; it holds no secret (none was issued then).
    body: stored.body.startsWith('{') ? stored.body : deps.answerBox.open(stored.body, answerContext(request)),
  };
}

/** A sealed answer opens only for the workspace and key it was stored under. */
function answerContext(request: IdempotentRequest): string {
  return `idempotent-answer:${request.workspaceId}:${request.key}`;
}

/** Thrown by the pipeline to answer with a stored response before the request is validated. */
export class IdempotentReplay {
  constructor(readonly reply: Reply) {}
}
