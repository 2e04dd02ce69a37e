import type { Document } from 'openapi-backend';
import type { OperationRules } from '../contract/operationRules.js';
import type { Admission, ApiProfile } from '../contract/pipeline.js';
import { PipelineFailure } from '../contract/pipelineFailure.js';
import type { CorsPolicy } from '../http/cors.js';
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError, IdempotentAnswerUnreadableError } from '../idempotency/idempotentCalls.js';
import { rateLimitClasses, type RateLimitClass } from '../../generated/work-platform/rules.js';
import type { PlanLimitTable } from '../limits/planLimits.js';
import type { LocalQuotaCounts } from '../limits/localQuotaCounts.js';
import type { RateLimiter } from '../limits/rateLimiter.js';
import type { SharedCallCounter } from '../limits/sharedCallCounter.js';
import type { Logger } from '../logger.js';
import { workspaceRoles } from '../store/users.js';
import type { Caller, CallerResolver } from '../auth/bearerTokens.js';
import { CredentialRefusedError, type RefusalReason } from '../auth/credentialRefused.js';
import { enforceCallLimits, enforceSharedCallLimits, type QuotaCounter } from './callLimits.js';
import type { WorkPlatformServices } from './operationContext.js';
import { ApiProblem, cursorProblem, originNotAllowed, toProblemReply, validationProblem } from './problems.js';
import { CursorError } from '../paging/cursor.js';
import { malformedIfMatch } from './versions.js';
import { storeErrorToProblem } from './storeProblems.js';
import { ConcurrencyCapError, type ExpensiveCallGate } from '../expensiveCalls/expensiveCallGate.js';
import { AnalyticsPoolClosedError } from '../expensiveCalls/analyticsWorkerPool.js';

export interface WorkPlatformProfileDependencies {
  document: Document;
  callers: CallerResolver;
  services: WorkPlatformServices;
  /** Every scope the API knows: the contract's scope catalogue. */
  scopeCatalogue: readonly string[];
  planTable: PlanLimitTable;
  /** Set (REDIS_URL, or PostgreSQL): the class buckets and the quota are counted there. */
  callCounter?: SharedCallCounter;
  /** Without callCounter (SQLite): the class buckets and the quota counted in the file. */
  sqliteLimits?: { rateLimiter: RateLimiter; quota: QuotaCounter; localQuota: LocalQuotaCounts };
  /** The concurrency caps of expensive calls (x-ratelimit-cost above 1); without it they run uncapped. */
  expensiveCalls?: ExpensiveCallGate;
  cors: CorsPolicy;
  problemTypeBase: string;
  now: () => number;
  logger: Logger;
}

/** The Work-Platform API: CORS, bearer tokens, scopes and roles, class buckets and quota, problem+json. */
export function workPlatformProfile(deps: WorkPlatformProfileDependencies): ApiProfile<Caller, WorkPlatformServices> {
  /**
   * A scheme accepts only its own kinds of token; the other scheme's kinds prove nothing to it.
   * Every call with a valid token is refused by one of the two schemes: one shared error, so that
   * no stack trace is captured per request.
   */
  const otherScheme = new CredentialRefusedError('unauthenticated');
  const scheme = (accepts: (kind: Caller['kind']) => boolean) => (caller: Caller) => {
    if (!accepts(caller.kind)) throw otherScheme;
    return caller;
  };
  return {
    name: 'work-platform',
    pathPrefix: '/v1',
    document: deps.document,
    operationsDirectory: new URL('./operations/', import.meta.url),
    services: deps.services,
    // Both security schemes read the same Authorization header: the pipeline looks it up once per request.
    identify: (headers) => deps.callers.resolve(headers.authorization),
    authenticate: {
      bearerAuth: scheme((kind) => kind === 'pat' || kind === 'session'),
      oauth2: scheme((kind) => kind === 'oauth'),
    },
    checkRules: (rules) => checkRules(rules, deps.scopeCatalogue),
    screen(call) {
      const cors = deps.cors.check(call.method, call.headers);
      if (cors.kind === 'blocked') {
        throw originNotAllowed(cors.origin, cors.headers);
      }
      return cors.kind === 'preflight' ? { headers: cors.headers, reply: { status: 204 } } : { headers: cors.headers };
    },
    admit: (caller, rules) => admitCaller(caller, rules, deps),
    runExpensive: (caller, _rules, call) => (deps.expensiveCalls ? deps.expensiveCalls.run(caller.workspace.id, call) : call()),
    idempotencyScope: (caller) => caller.workspace.id,
    errorReply: (error, requestId) => toProblemReply(asProblem(error), requestId, deps.problemTypeBase, deps.logger),
  };
}

function checkRules(rules: OperationRules, scopeCatalogue: readonly string[]): void {
  if (!rateLimitClasses.includes(rules.rateLimitClass as RateLimitClass)) {
    throw new Error(`${rules.operationId}: x-ratelimit-class must be one of ${rateLimitClasses.join(', ')}, not "${rules.rateLimitClass}"`);
  }
  const unknownScopes = rules.requiredScopes.filter((scope) => !scopeCatalogue.includes(scope));
  if (unknownScopes.length > 0) throw new Error(`${rules.operationId}: x-required-scopes names ${unknownScopes.join(', ')}, not in the scope catalogue`);
  const unknownRoles = rules.requiredRoles.filter((role) => !(workspaceRoles as readonly string[]).includes(role));
  if (unknownRoles.length > 0) throw new Error(`${rules.operationId}: unknown roles ${unknownRoles.join(', ')} in x-required-roles`);
}

/** Roles, then scopes, then the rate limit and quota: all read from the operation's rules. */
function admitCaller(caller: Caller, rules: OperationRules, deps: WorkPlatformProfileDependencies): Admission | Promise<Admission> {
  // Every kind of caller: a session has every scope of its role, and a token only those its user's role holds.
  if (rules.requiredRoles.length > 0 && !rules.requiredRoles.includes(caller.role)) {
    return {
      headers: {},
      refusal: new ApiProblem('insufficient-role', {
        detail: `This operation is open to ${rules.requiredRoles.join(' and ')}; your role is ${caller.role}.`,
        extensions: { requiredRoles: [...rules.requiredRoles], heldRoles: [caller.role] },
      }),
    };
  }
  const missingScopes = rules.requiredScopes.filter((scope) => !caller.scopes.includes(scope));
  if (missingScopes.length > 0) {
    return {
      headers: {},
      refusal: new ApiProblem('insufficient-scope', {
        detail: `This operation needs the scope${rules.requiredScopes.length > 1 ? 's' : ''} ${rules.requiredScopes.join(', ')}.`,
        extensions: { requiredScopes: [...rules.requiredScopes], grantedScopes: [...caller.scopes] },
      }),
    };
  }
  if (deps.callCounter) {
    return enforceSharedCallLimits({ table: deps.planTable, counter: deps.callCounter, now: deps.now() }, caller, rules.rateLimitClass as RateLimitClass, rules.rateLimitCost);
  }
  if (!deps.sqliteLimits) throw new Error('the Work-Platform profile was built with neither a call counter nor SQLite limits');
  return enforceCallLimits({ table: deps.planTable, ...deps.sqliteLimits, now: deps.now() }, caller, rules.rateLimitClass as RateLimitClass, rules.rateLimitCost);
}

/** Seconds a call refused by a concurrency cap waits: expensive calls end within a second or so. */
const CONCURRENCY_RETRY_AFTER_SECONDS = 1;

/** 429 `rate-limited` of an expensive call refused by a concurrency cap (the bucket was not the reason: no `rateLimit`). */
function concurrencyCapProblem(error: ConcurrencyCapError): ApiProblem {
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
}

const WWW_AUTHENTICATE = Object.freeze({ 'www-authenticate': 'Bearer realm="work-platform"' });
const UNAUTHENTICATED_DETAIL = 'Send Authorization: Bearer <token> with a valid Personal Access Token, session token or OAuth access token.';

function refusalProblem(reason: RefusalReason): ApiProblem {
  switch (reason) {
    case 'session-expired':
      return new ApiProblem('token-expired', { detail: 'The session token has expired; refresh it.', headers: WWW_AUTHENTICATE });
    case 'session-revoked':
      return new ApiProblem('unauthenticated', { detail: 'This session was revoked; sign in again.', headers: WWW_AUTHENTICATE });
    default:
      return new ApiProblem('unauthenticated', { detail: UNAUTHENTICATED_DETAIL, headers: WWW_AUTHENTICATE });
  }
}

/** The pipeline's failures and the lower layers' typed errors in the problem vocabulary; the rest passes to the funnel as it is. */
function asProblem(error: unknown): unknown {
  if (error instanceof CredentialRefusedError) return refusalProblem(error.reason);
  if (error instanceof ConcurrencyCapError) return concurrencyCapProblem(error);
  if (error instanceof AnalyticsPoolClosedError) {
    return new ApiProblem('unavailable', { detail: 'The server is shutting down; retry on another connection.', headers: { 'retry-after': '1' } });
  }
  if (error instanceof IdempotencyKeyReusedError) {
    return new ApiProblem('conflict', {
      detail: `This Idempotency-Key was used for ${error.firstMethod} ${error.firstPath}; use a new key for this request.`,
      code: 'idempotency-key-reused',
    });
  }
  if (error instanceof IdempotencyKeyInUseError) {
    return new ApiProblem('conflict', {
      detail: 'The first request with this Idempotency-Key is still running; retry shortly to get its answer.',
      code: 'idempotency-key-in-use',
    });
  }
  if (error instanceof IdempotentAnswerUnreadableError) {
    return new ApiProblem('conflict', {
      detail:
        'The request with this Idempotency-Key was carried out, but its answer can no longer be read (the server key that sealed it was replaced). Do not repeat the request: read the resource instead.',
      code: 'idempotent-answer-unavailable',
      cause: error,
    });
  }
  if (!(error instanceof PipelineFailure)) return storeErrorToProblem(error);
  const failure = error.failure;
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
