import type { Context, Document } from 'openapi-backend';
import { ContractBackend } from '../contract/contractBackend.js';
import { readOperationRules, type OperationRules } from '../contract/operationRules.js';
import type { ContractApi, HandledCall, IncomingCall, Reply } from '../contract/reply.js';
import type { CorsPolicy } from '../http/cors.js';
import { PayloadTooLargeError } from '../http/httpAdapter.js';
import { RATE_LIMIT_CLASSES, type PlanLimitTable, type RateLimitClass } from '../limits/planLimits.js';
import type { RateLimiter } from '../limits/rateLimiter.js';
import type { Logger } from '../logger.js';
import { WORK_PLATFORM_SCOPES } from '../store/personalAccessTokens.js';
import type { Workspace } from '../store/workspaces.js';
import { workspaceRoles } from '../store/users.js';
import type { Caller, CallerResolver } from './auth.js';
import { enforceCallLimits, type QuotaCounter } from './callLimits.js';
import { IdempotentReplay, runIdempotently, storedAnswer, type IdempotencyDependencies, type IdempotentRequest } from './idempotency.js';
import type { WorkPlatformContext, WorkPlatformOperationId, WorkPlatformServices } from './operationContext.js';
import { workPlatformOperations } from './operations/index.js';
import { ApiProblem, toProblemReply, validationProblem } from './problems.js';
import { storeErrorToProblem } from './storeProblems.js';

export interface WorkPlatformApiDependencies {
  document: Document;
  callers: CallerResolver;
  services: WorkPlatformServices;
  planTable: PlanLimitTable;
  rateLimiter: RateLimiter;
  quota: QuotaCounter;
  idempotency: IdempotencyDependencies;
  cors: CorsPolicy;
  problemTypeBase: string;
  now: () => number;
  logger: Logger;
}

/** What one call carries through openapi-backend's pipeline. */
interface CallState {
  call: IncomingCall;
  operationId?: string;
  caller?: Caller;
  workspace?: Workspace;
  limitHeaders?: Record<string, string>;
}

type AnyHandler = (ctx: WorkPlatformContext<WorkPlatformOperationId>) => Reply;

/** Builds the Work-Platform API: CORS, auth, scopes and roles, limits, validation, handlers, problem funnel. */
export async function createWorkPlatformApi(deps: WorkPlatformApiDependencies): Promise<ContractApi> {
  const backend = new ContractBackend(deps.document);
  await backend.init();
  const rules = readOperationRules(backend);
  checkRules(rules);
  const handlers = workPlatformOperations as unknown as Record<string, AnyHandler>;
  const missing = [...rules.keys()].filter((operationId) => !handlers[operationId]);
  if (missing.length > 0) throw new Error(`No handler for operations: ${missing.join(', ')}`);

  backend.registerSecurityHandler('bearerAuth', async (context: Context, state: CallState) => {
    try {
      state.caller = await deps.callers.resolve(context.request.headers.authorization);
      return true;
    } catch (error) {
      return { error };
    }
  });

  backend.register({
    postRoutingHandler: (context: Context, state: CallState) => {
      state.operationId = context.operation?.operationId;
    },
    notFound: (_context: Context, state: CallState) => {
      throw new ApiProblem('not-found', { detail: `No operation answers ${state.call.path}.` });
    },
    methodNotAllowed: (_context: Context, state: CallState) => {
      const allowed = backend.router.route(state.call.method, state.call.path)?.allowedMethods ?? [];
      throw new ApiProblem('method-not-allowed', {
        detail: `${state.call.path} answers ${allowed.join(', ')}, not ${state.call.method}.`,
        headers: { allow: allowed.join(', ') },
      });
    },
    unauthorizedHandler: (context: Context) => {
      const failure = (context.security?.bearerAuth as { error?: unknown } | undefined)?.error;
      throw failure ?? new ApiProblem('unauthenticated', { detail: 'Send Authorization: Bearer <token>.' });
    },
    postSecurityHandler: (context: Context, state: CallState) => {
      const rule = rules.get(context.operation?.operationId ?? '');
      if (!rule || !state.caller) return;
      admitCaller(rule, state, deps);
      // Matching is on the key, not the body: a repeat gets the stored answer even when its body
      // would not validate now.
      const replay = idempotencyKeyOf(rule, context) && storedAnswer(deps.idempotency, idempotentRequest(rule, context, state));
      if (replay) throw new IdempotentReplay(replay);
      checkBodyMediaType(context, state.call);
    },
    validationFail: (context: Context) => {
      const errors = context.validation.errors ?? [];
      // A required If-Match that is missing is a missing precondition, not a malformed request.
      const missingPrecondition = errors.some(
        (error) => error.keyword === 'required' && error.instancePath === '/header' && error.params.missingProperty === 'if-match',
      );
      if (missingPrecondition) {
        throw new ApiProblem('precondition-required', { detail: 'Send If-Match with the current version (the ETag) of what you change.' });
      }
      throw validationProblem(errors);
    },
    notImplemented: (context: Context) => {
      throw new Error(`operation ${context.operation?.operationId} has no handler`);
    },
  });

  for (const [operationId, handler] of Object.entries(handlers)) {
    const rule = rules.get(operationId)!;
    backend.register(operationId, (context: Context, state: CallState) => {
      const ctx = buildContext(context, state, deps);
      if (!idempotencyKeyOf(rule, context) || !state.workspace) return handler(ctx);
      return runIdempotently(deps.idempotency, idempotentRequest(rule, context, state), () => handler(ctx));
    });
  }

  return {
    name: 'work-platform',
    pathPrefix: '/v1',
    async handle(call: IncomingCall): Promise<HandledCall> {
      const state: CallState = { call };
      const cors = deps.cors.check(call.method, call.headers);
      let reply: Reply;
      try {
        if (cors.kind === 'blocked') {
          throw new ApiProblem('forbidden', { detail: `Browser calls from ${cors.origin} are not allowed.`, code: 'origin-not-allowed' });
        }
        if (cors.kind === 'preflight') {
          reply = { status: 204 };
        } else {
          const body = await call.readBody();
          reply = (await backend.handleRequest(
            {
              method: call.method,
              path: call.path,
              query: call.rawQuery,
              headers: call.headers as Record<string, string>,
              body: body?.toString('utf8'),
            },
            state,
          )) as Reply;
        }
      } catch (error) {
        reply = error instanceof IdempotentReplay ? error.reply : problemReply(error, call.requestId, deps);
      }
      return {
        reply: { ...reply, headers: { ...cors.headers, ...state.limitHeaders, ...reply.headers } },
        operationId: state.operationId,
      };
    },
  };
}

/** The one error funnel of /v1: whatever was thrown becomes a problem reply. */
function problemReply(error: unknown, requestId: string, deps: WorkPlatformApiDependencies): Reply {
  const failure =
    error instanceof URIError
      ? new ApiProblem('not-found', { detail: 'The path is not valid percent-encoding.' })
      : error instanceof PayloadTooLargeError
        ? new ApiProblem('payload-too-large', { detail: `The request body exceeds ${error.limitBytes} bytes.` })
        : storeErrorToProblem(error);
  return toProblemReply(failure, requestId, deps.problemTypeBase, deps.logger);
}

/** The Idempotency-Key of a POST, when it carries one. */
function idempotencyKeyOf(rule: OperationRules, context: Context): string | undefined {
  const key = context.request.headers['idempotency-key'];
  return rule.method === 'post' && typeof key === 'string' ? key : undefined;
}

/**
 * The request a key is stored for: the path with its parameters filled in, so that a key used to
 * rotate one subscription's secret is not replayed (with that secret) for another subscription.
 */
function idempotentRequest(rule: OperationRules, context: Context, state: CallState): IdempotentRequest {
  const params = (context.request.params ?? {}) as Record<string, unknown>;
  const path = rule.path.replace(/\{([^}]+)\}/g, (template, name: string) => (typeof params[name] === 'string' ? encodeURIComponent(params[name]) : template));
  return { workspaceId: state.workspace!.id, key: idempotencyKeyOf(rule, context)!, method: 'POST', path };
}

function checkRules(rules: Map<string, OperationRules>): void {
  for (const rule of rules.values()) {
    if (!RATE_LIMIT_CLASSES.includes(rule.rateLimitClass as RateLimitClass)) {
      throw new Error(`${rule.operationId}: x-ratelimit-class must be read, write or ai, not "${rule.rateLimitClass}"`);
    }
    const unknownScopes = rule.requiredScopes.filter((scope) => !(WORK_PLATFORM_SCOPES as readonly string[]).includes(scope));
    if (unknownScopes.length > 0) throw new Error(`${rule.operationId}: unknown scopes ${unknownScopes.join(', ')}`);
    const unknownRoles = rule.requiredRoles.filter((role) => !(workspaceRoles as readonly string[]).includes(role));
    if (unknownRoles.length > 0) throw new Error(`${rule.operationId}: unknown roles ${unknownRoles.join(', ')} in x-required-roles`);
  }
}

/** Scopes, then roles, then the rate limit and quota: all read from the operation's extensions. */
function admitCaller(rule: OperationRules, state: CallState, deps: WorkPlatformApiDependencies): void {
  const caller = state.caller!;
  const workspace = caller.workspace;
  if (!workspace) throw new ApiProblem('unauthenticated', { detail: 'The token belongs to no existing workspace.' });
  state.workspace = workspace;

  const missingScopes = rule.requiredScopes.filter((scope) => !caller.scopes.includes(scope));
  if (missingScopes.length > 0) {
    throw new ApiProblem('insufficient-scope', {
      detail: `This operation needs the scope${rule.requiredScopes.length > 1 ? 's' : ''} ${rule.requiredScopes.join(', ')}.`,
      extensions: { requiredScopes: [...rule.requiredScopes], grantedScopes: [...caller.scopes] },
    });
  }
  if (caller.kind === 'session' && rule.requiredRoles.length > 0 && !rule.requiredRoles.includes(caller.role)) {
    throw new ApiProblem('forbidden', {
      detail: `This operation is open to ${rule.requiredRoles.join(' and ')} members; you are ${caller.role}.`,
      code: 'role-not-allowed',
    });
  }
  try {
    state.limitHeaders = enforceCallLimits(
      { table: deps.planTable, rateLimiter: deps.rateLimiter, quota: deps.quota, now: deps.now() },
      caller,
      workspace,
      rule.rateLimitClass as RateLimitClass,
    );
  } catch (error) {
    if (error instanceof ApiProblem) state.limitHeaders = { ...error.headers };
    throw error;
  }
}

function checkBodyMediaType(context: Context, call: IncomingCall): void {
  const body = context.request.requestBody as unknown;
  if (!context.operation?.requestBody || body === undefined || body === '') return;
  const contentType = String(call.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (contentType !== 'application/json') {
    throw new ApiProblem('unsupported-media-type', { detail: `Send the body as application/json, not ${contentType || 'no content type'}.` });
  }
}

/** Validation has checked parameters and body against the operation's schemas, so the casts hold. */
function buildContext(context: Context, state: CallState, deps: WorkPlatformApiDependencies): WorkPlatformContext<WorkPlatformOperationId> {
  type Ctx = WorkPlatformContext<WorkPlatformOperationId>;
  return {
    requestId: state.call.requestId,
    caller: state.caller,
    workspace: state.workspace,
    params: context.request.params as Ctx['params'],
    query: context.request.query as Ctx['query'],
    body: context.request.requestBody as Ctx['body'],
    headers: context.request.headers as Ctx['headers'],
    now: deps.now,
    services: deps.services,
  };
}
