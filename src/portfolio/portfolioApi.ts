import type { Context, Document } from 'openapi-backend';
import type { ErrorObject } from 'ajv';
import { ContractBackend, type ParameterObject } from '../contract/contractBackend.js';
import { readOperationRules } from '../contract/operationRules.js';
import type { ContractApi, HandledCall, IncomingCall, Reply } from '../contract/reply.js';
import type { RateLimiter } from '../limits/rateLimiter.js';
import type { Logger } from '../logger.js';
import { authenticateApiKey, type ApiKeyLookup, type AuthenticatedKey } from './auth.js';
import { NOT_FOUND_MESSAGE, PortfolioError, toErrorReply, type ParameterProblem } from './errors.js';
import type { PortfolioContext, PortfolioOperationId } from './operationContext.js';
import { portfolioOperations } from './operations/index.js';
import type { PortfolioReader } from '../store/portfolioContent.js';

export interface PortfolioApiDependencies {
  document: Document;
  findApiKeyByHash: ApiKeyLookup;
  content: PortfolioReader;
  rateLimiter: RateLimiter;
  rateLimit: { requestsPerWindow: number; windowSeconds: number };
  /** The served downloads, prepared once at start-up. */
  downloads: { openapiJson: string; openapiYaml: string; postmanJson: string };
  now: () => number;
  logger: Logger;
}

/** What one call carries through openapi-backend's pipeline. */
interface CallState {
  call: IncomingCall;
  operationId?: string;
  key?: AuthenticatedKey;
  rateLimitHeaders?: Record<string, string>;
}

const NO_STORE_HEADERS = { 'cache-control': 'no-store', vary: 'Authorization' };

/** Builds the Published Portfolio Read API: contract, auth, rate limit, handlers and error funnel. */
export async function createPortfolioApi(deps: PortfolioApiDependencies): Promise<ContractApi> {
  const backend = new ContractBackend(deps.document);
  await backend.init();
  const rules = readOperationRules(backend);
  for (const rule of rules.values()) {
    const expected = rule.isPublic ? 'unmetered' : 'read';
    if (rule.rateLimitClass !== expected) {
      // Refusing to start keeps a typo from leaving an authenticated operation unmetered.
      throw new Error(`${rule.operationId}: x-ratelimit-class must be "${expected}", not "${rule.rateLimitClass}"`);
    }
  }
  const handlers = portfolioOperations as unknown as Record<string, (ctx: PortfolioContext<PortfolioOperationId>) => Reply>;
  const missing = backend.getOperations().filter((operation) => !handlers[operation.operationId ?? '']);
  if (missing.length > 0) {
    throw new Error(`No handler for operations: ${missing.map((operation) => operation.operationId).join(', ')}`);
  }

  backend.registerSecurityHandler('apiKey', (context: Context, state: CallState) => {
    try {
      state.key = authenticateApiKey(context.request.headers.authorization, deps.findApiKeyByHash, deps.now());
      return true;
    } catch (error) {
      return { error };
    }
  });

  backend.register({
    postRoutingHandler: (context: Context, state: CallState) => {
      state.operationId = context.operation?.operationId;
    },
    notFound: () => {
      throw new PortfolioError('not_found', NOT_FOUND_MESSAGE);
    },
    methodNotAllowed: (_context: Context, state: CallState) => {
      const allowed = backend.router.route(state.call.method, state.call.path)?.allowedMethods ?? [];
      throw new PortfolioError('method_not_allowed', `Method ${state.call.method} is not allowed here; use ${allowed.join(', ')}.`, {
        headers: { allow: allowed.join(', ') },
      });
    },
    unauthorizedHandler: (context: Context) => {
      const failure = (context.security?.apiKey as { error?: unknown } | undefined)?.error;
      throw failure ?? new PortfolioError('unauthenticated', 'A valid API key is required.');
    },
    postSecurityHandler: (context: Context, state: CallState) => {
      if (!state.key || !context.operation?.operationId) return;
      enforceRateLimit(state, deps);
    },
    validationFail: (context: Context) => {
      throw invalidParameters(context.validation.errors ?? [], context.operation?.parameters as ParameterObject[]);
    },
    notImplemented: (context: Context) => {
      throw new Error(`operation ${context.operation?.operationId} has no handler`);
    },
  });

  for (const [operationId, handler] of Object.entries(handlers)) {
    backend.register(operationId, (context: Context, state: CallState) =>
      handler(buildContext(context, state, deps)),
    );
  }

  return {
    name: 'portfolio',
    pathPrefix: '/api/v1',
    async handle(call: IncomingCall): Promise<HandledCall> {
      const state: CallState = { call };
      let reply: Reply;
      try {
        reply = (await backend.handleRequest(
          { method: call.method, path: call.path, query: call.rawQuery, headers: call.headers as Record<string, string> },
          state,
        )) as Reply;
      } catch (error) {
        // A path segment that is not valid percent-encoding names nothing: 404, not a fault.
        const failure = error instanceof URIError ? new PortfolioError('not_found', NOT_FOUND_MESSAGE) : error;
        reply = toErrorReply(failure, call.requestId, deps.logger);
      }
      const isPublic = state.operationId !== undefined && rules.get(state.operationId)?.isPublic;
      reply = {
        ...reply,
        headers: { ...(isPublic ? {} : NO_STORE_HEADERS), ...state.rateLimitHeaders, ...reply.headers },
      };
      return { reply, operationId: state.operationId };
    },
  };
}

function enforceRateLimit(state: CallState, deps: PortfolioApiDependencies): void {
  const key = state.key!;
  const limit = key.rateLimit ?? deps.rateLimit.requestsPerWindow;
  const windowSeconds = deps.rateLimit.windowSeconds;
  const decision = deps.rateLimiter.consume(`portfolio-key:${key.keyId}`, limit, windowSeconds * 1000);
  state.rateLimitHeaders = {
    'x-ratelimit-limit': String(decision.limit),
    'x-ratelimit-remaining': String(decision.remaining),
    'x-ratelimit-reset': String(decision.resetAtSeconds),
  };
  if (!decision.allowed) {
    throw new PortfolioError(
      'rate_limited',
      `Rate limit of ${limit} requests per ${windowSeconds} seconds exceeded; retry after ${decision.retryAfterSeconds} seconds.`,
      { headers: { 'retry-after': String(decision.retryAfterSeconds) } },
    );
  }
}

/** Validation has already checked the parameters against the operation's schema, so the casts hold. */
function buildContext(context: Context, state: CallState, deps: PortfolioApiDependencies): PortfolioContext<PortfolioOperationId> {
  return {
    requestId: state.call.requestId,
    tenantId: state.key?.tenantId ?? '',
    params: context.request.params as PortfolioContext<PortfolioOperationId>['params'],
    query: context.request.query as PortfolioContext<PortfolioOperationId>['query'],
    content: deps.content,
    downloads: deps.downloads,
    now: deps.now,
  };
}


/** Maps Ajv's errors to one ErrorEnvelope detail per failing parameter, worded from its schema. */
function invalidParameters(errors: ErrorObject[], parameters: ParameterObject[] = []): PortfolioError {
  const details: ParameterProblem[] = [];
  for (const error of errors) {
    const [, location, name] = error.instancePath.split('/');
    if (!location || !name || details.some((detail) => detail.name === name)) continue;
    const parameter = parameters.find((candidate) => candidate.name === name && candidate.in === location);
    const message =
      error.keyword === 'singleValue' || !parameter?.schema ? (error.message ?? 'is invalid') : describeSchema(parameter.schema);
    details.push({ in: (location === 'path' ? 'path' : location === 'header' ? 'header' : 'query'), name, message });
  }
  if (details.length === 0) details.push({ in: 'query', name: 'query', message: 'is invalid' });
  const summary = details.map((detail) => `"${detail.name}" ${detail.message}`).join('; ');
  return new PortfolioError('invalid_parameter', `Invalid ${details[0]!.in} parameter ${summary}.`, { details });
}

function describeSchema(schema: Record<string, unknown>): string {
  const { type, minimum, maximum } = schema as { type?: unknown; minimum?: number; maximum?: number };
  const noun = type === 'integer' ? 'an integer' : type === 'number' ? 'a number' : type === 'boolean' ? 'true or false' : 'a string';
  if (minimum !== undefined && maximum !== undefined) return `must be ${noun} from ${minimum} to ${maximum}`;
  if (minimum !== undefined) return `must be ${noun} ≥ ${minimum}`;
  if (maximum !== undefined) return `must be ${noun} ≤ ${maximum}`;
  return `must be ${noun}`;
}

