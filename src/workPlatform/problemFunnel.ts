import type { Reply } from '../contract/reply.js';
import type { PipelineFailure } from '../contract/pipelineFailure.js';
import type { AiProviderFailure } from '../ai/provider.js';
import type { CredentialRefusedError } from '../auth/credentialRefused.js';
import type { AnalyticsPoolClosedError } from '../expensiveCalls/analyticsWorkerPool.js';
import type { ConcurrencyCapError } from '../expensiveCalls/expensiveCallGate.js';
import type { IdempotencyKeyInUseError, IdempotencyKeyReusedError, IdempotentAnswerUnreadableError } from '../idempotency/idempotentCalls.js';
import type { Logger } from '../logger.js';
import { CursorError } from '../paging/cursor.js';
import { wordError, type ErrorWording } from '../serviceError.js';
import type { WorkPlatformStoreRefusal } from '../store/workPlatformErrors.js';
import { ApiProblem, cursorProblem, EXTENSION_MEMBERS, INTERNAL_DETAIL, PROBLEM_CONTENT_TYPE, tooLongIssue, validationProblem } from './problems.js';
import { malformedIfMatch } from './versions.js';

/** The errors the Work-Platform API answers with a problem of their own; any other is its 500. */
export type WorkPlatformErrors =
  | ApiProblem
  | PipelineFailure
  | CredentialRefusedError
  | ConcurrencyCapError
  | AnalyticsPoolClosedError
  | IdempotencyKeyReusedError
  | IdempotencyKeyInUseError
  | IdempotentAnswerUnreadableError
  | CursorError
  | AiProviderFailure
  | WorkPlatformStoreRefusal;

/**
 * The Work-Platform API's one error funnel: every error of the family becomes its problem document
 * (PROBLEM_WORDING); anything else a generic 500 `internal`, the error itself (stack included) in
 * the log with the request id, never shown to the client. 5xx problems are logged too.
 */
export function toProblemReply(error: unknown, requestId: string, typeBase: string, logger: Logger): Reply {
  const worded = wordError(error, PROBLEM_WORDING);
  const problem = worded ?? new ApiProblem('internal', { detail: INTERNAL_DETAIL });
  if (!worded) {
    logger.error('unhandled error', { requestId, error });
  } else if (problem.status >= 500) {
    logger.error('server problem', { requestId, slug: problem.slug, code: problem.code, detail: problem.detail, error: problem.cause });
  }

  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(problem.headers)) {
    if (name.toLowerCase() !== 'content-type') headers[name] = value;
  }
  headers['content-type'] = PROBLEM_CONTENT_TYPE;

  const body: Record<string, unknown> = {
    type: `${typeBase.replace(/\/+$/, '')}/${problem.slug}`,
    title: problem.title,
    status: problem.status,
    detail: problem.detail,
    requestId,
  };
  if (problem.code !== undefined) body.code = problem.code;
  for (const member of EXTENSION_MEMBERS) {
    if (problem.extensions[member] !== undefined) body[member] = problem.extensions[member];
  }
  return { status: problem.status, headers, body };
}

/** Seconds a call refused by a concurrency cap waits: expensive calls end within a second or so. */
const CONCURRENCY_RETRY_AFTER_SECONDS = 1;
const WWW_AUTHENTICATE = Object.freeze({ 'www-authenticate': 'Bearer realm="work-platform"' });
const UNAUTHENTICATED_DETAIL = 'Send Authorization: Bearer <token> with a valid Personal Access Token, session token or OAuth access token.';

/** The store's refusals: its message is the detail, and the error stays the problem's cause, for the log. */
const storeConflict = (error: Error, code: string) => new ApiProblem('conflict', { detail: error.message, code, cause: error });

/** What a failed AI provider call was charged, in words for its problem's detail. */
const CHARGE_WORDS: Record<AiProviderFailure['charge']['kind'], string> = {
  none: 'Nothing was charged.',
  usage: 'The provider ran it, so it is charged at the usage the provider reported.',
  bound: 'The request had gone out and may have been billed, so it is charged at its upper bound.',
};

const PROBLEM_WORDING: ErrorWording<ApiProblem, WorkPlatformErrors> = {
  problem: (problem) => problem,
  'pipeline-failure': (error) => pipelineProblem(error.failure),
  'credential-refused': (error) => {
    switch (error.reason) {
      case 'session-expired':
        return new ApiProblem('token-expired', { detail: 'The session token has expired; refresh it.', headers: WWW_AUTHENTICATE });
      case 'session-revoked':
        return new ApiProblem('unauthenticated', { detail: 'This session was revoked; sign in again.', headers: WWW_AUTHENTICATE });
      default:
        return new ApiProblem('unauthenticated', { detail: UNAUTHENTICATED_DETAIL, headers: WWW_AUTHENTICATE });
    }
  },
  // 429 of an expensive call refused by a concurrency cap (the bucket was not the reason: no `rateLimit`).
  'concurrency-cap': (error) => {
    const headers = { 'retry-after': String(CONCURRENCY_RETRY_AFTER_SECONDS) };
    if (error.cap === 'workspace') {
      return new ApiProblem('rate-limited', {
        code: 'workspace-concurrency-cap',
        detail: `This workspace already has ${error.limit} expensive calls in flight, as many as the server runs for one workspace at a time; send the next when one has answered.`,
        headers,
      });
    }
    return new ApiProblem('rate-limited', {
      code: 'expensive-call-queue-full',
      detail: `The server's queue of expensive calls is full (${error.limit} waiting); retry after ${CONCURRENCY_RETRY_AFTER_SECONDS} second.`,
      headers,
    });
  },
  'analytics-pool-closed': () => new ApiProblem('unavailable', { detail: 'The server is shutting down; retry on another connection.', headers: { 'retry-after': '1' } }),
  'idempotency-key-reused': (error) =>
    new ApiProblem('conflict', {
      detail: `This Idempotency-Key was used for ${error.firstMethod} ${error.firstPath}; use a new key for this request.`,
      code: 'idempotency-key-reused',
    }),
  'idempotency-key-in-use': () =>
    new ApiProblem('conflict', {
      detail: 'The first request with this Idempotency-Key is still running; retry shortly to get its answer.',
      code: 'idempotency-key-in-use',
    }),
  'idempotent-answer-unreadable': (error) =>
    new ApiProblem('conflict', {
      detail:
        'The request with this Idempotency-Key was carried out, but its answer can no longer be read (the server key that sealed it was replaced). Do not repeat the request: read the resource instead.',
      code: 'idempotent-answer-unavailable',
      cause: error,
    }),
  'invalid-cursor': (error) => cursorProblem(error),
  'ai-provider-failure': (error) => providerProblem(error),
  'not-found': (error) => new ApiProblem('not-found', { detail: error.message, code: error.code, cause: error }),
  'version-conflict': (error) => storeConflict(error, 'version-conflict'),
  'project-has-tasks': (error) => storeConflict(error, 'project-has-tasks'),
  'in-use': (error) => storeConflict(error, error.code),
  'contract-state': (error) => storeConflict(error, error.code),
  'webhook-limit-reached': (error) => storeConflict(error, 'webhook-limit-reached'),
  'webhook-disabled': (error) => storeConflict(error, 'webhook-disabled'),
  // A value a storage constraint rejects: 400, as the seed answers it.
  'storage-limit-exceeded': (error) =>
    new ApiProblem('bad-request', { detail: error.message, code: 'value-too-long', cause: error, extensions: { errors: [tooLongIssue(error.field, error.limit)] } }),
  // A value the store cannot persist; the contract's validation normally answers 422 before the store is reached.
  'invalid-value': (error) => new ApiProblem('bad-request', { detail: error.message, code: 'invalid-value', cause: error }),
  'value-refused': (error) =>
    new ApiProblem('validation', {
      detail: error.message,
      cause: error,
      extensions: { errors: error.refused.map(({ path, code, message }) => ({ path, code, message })) },
    }),
};

/** The provider's failure in the contract's words; its own message (address, status, body) goes only to the log, as the cause. */
function providerProblem(failure: AiProviderFailure): ApiProblem {
  const charge = CHARGE_WORDS[failure.charge.kind];
  switch (failure.reason) {
    case 'timeout':
      return new ApiProblem('ai-provider-timeout', { detail: `The AI provider did not answer in time. ${charge} Retry later.`, code: 'provider-timeout', cause: failure });
    case 'status':
      return new ApiProblem('ai-provider-error', {
        detail: `The AI provider answered with an error. ${charge} Retry later, quoting the request id if it persists.`,
        code: 'provider-status',
        cause: failure,
      });
    case 'malformed-answer':
      return new ApiProblem('ai-provider-error', {
        detail: `The AI provider's answer could not be used. ${charge} Retry later, quoting the request id if it persists.`,
        code: 'provider-malformed-answer',
        cause: failure,
      });
    case 'unreachable':
      return new ApiProblem('ai-provider-error', { detail: `The AI provider could not be reached. ${charge} Retry later.`, code: 'provider-unreachable', cause: failure });
  }
}

function pipelineProblem(failure: PipelineFailure['failure']): ApiProblem {
  switch (failure.kind) {
    case 'not-found':
      return new ApiProblem('not-found', { detail: failure.path ? `No operation answers ${failure.path}.` : 'The path is not valid percent-encoding.' });
    case 'method-not-allowed':
      return new ApiProblem('method-not-allowed', {
        detail: `${failure.path} answers ${failure.allowed.join(', ')}, not ${failure.method}.`,
        headers: { allow: failure.allowed.join(', ') },
      });
    case 'invalid-request': {
      // A required If-Match that is missing is a missing precondition, not a malformed request.
      const missingPrecondition = failure.errors.some(
        (issue) => issue.keyword === 'required' && issue.instancePath === '/header' && issue.params.missingProperty === 'if-match',
      );
      if (missingPrecondition) {
        return new ApiProblem('precondition-required', { detail: 'Send If-Match with the current version (the ETag) of what you change.' });
      }
      // The If-Match parameters' pattern is the version the server reads: anything else (`*` included) keeps its 400.
      if (failure.errors.some((issue) => issue.instancePath === '/header/if-match')) return malformedIfMatch();
      // A cursor of another shape is not one this server issued: the answer to a forged one. Its length keeps its own issue.
      if (failure.errors.every((issue) => issue.instancePath === '/query/cursor')) {
        const lengths = failure.errors.filter((issue) => issue.keyword !== 'pattern');
        if (lengths.length === 0) return cursorProblem(new CursorError('unreadable', 'not a cursor of this server'));
        return validationProblem(lengths, { code: 'invalid-cursor' });
      }
      return validationProblem(failure.errors);
    }
    case 'unsupported-media-type':
      return new ApiProblem('unsupported-media-type', {
        detail: `Send the body as ${failure.accepted.join(' or ')}, not ${failure.contentType || 'no content type'}.`,
      });
    case 'payload-too-large':
      return new ApiProblem('payload-too-large', { detail: `The request body exceeds ${failure.limitBytes} bytes.` });
    case 'malformed-request':
      return new ApiProblem('bad-request', { detail: `The request is malformed: ${failure.reason}.`, code: failure.code ?? 'malformed-request' });
    case 'headers-too-large':
      return new ApiProblem('request-header-fields-too-large', { detail: `The request's headers exceed ${failure.limitBytes} bytes.` });
    case 'request-timeout':
      return new ApiProblem('request-timeout', { detail: `The request did not arrive in time (its head within ${failure.timeoutMs / 1000} seconds, all of it within the server's request timeout).` });
    case 'unavailable':
      return new ApiProblem('unavailable', {
        detail:
          failure.reason === 'busy'
            ? `The database is busy with another writer; nothing was written. Retry after ${failure.retryAfterSeconds} seconds.`
            : `The database cannot be reached now (down or restarting). Retry after ${failure.retryAfterSeconds} seconds.`,
        headers: { 'retry-after': String(failure.retryAfterSeconds) },
      });
  }
}
