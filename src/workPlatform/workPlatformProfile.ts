import type { Document } from 'openapi-backend';
import type { OperationRules } from '../contract/operationRules.js';
import type { Admission, ApiProfile } from '../contract/pipeline.js';
import type { CorsPolicy } from '../http/cors.js';
import { rateLimitClasses, type RateLimitClass } from '../../generated/work-platform/rules.js';
import type { PlanLimitTable } from '../limits/planLimits.js';
import type { LocalQuotaCounts } from '../limits/localQuotaCounts.js';
import type { RateLimiter } from '../limits/rateLimiter.js';
import type { SharedCallCounter } from '../limits/sharedCallCounter.js';
import type { Logger } from '../logger.js';
import { workspaceRoles } from '../store/users.js';
import type { Caller, CallerResolver } from '../auth/bearerTokens.js';
import { CredentialRefusedError } from '../auth/credentialRefused.js';
import { enforceCallLimits, enforceSharedCallLimits, type QuotaCounter } from './callLimits.js';
import type { WorkPlatformServices } from './operationContext.js';
import { ApiProblem, originNotAllowed } from './problems.js';
import { toProblemReply } from './problemFunnel.js';
import type { ExpensiveCallGate } from '../expensiveCalls/expensiveCallGate.js';

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
    errorReply: (error, requestId) => toProblemReply(error, requestId, deps.problemTypeBase, deps.logger),
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
