import type { Document } from 'openapi-backend';
import type { ApiProfile, Admission } from '../contract/pipeline.js';
import { PipelineFailure } from '../contract/pipelineFailure.js';
import { locatedIssues } from '../contract/validationIssues.js';
import type { RateLimitDecision, RateLimiter } from '../limits/rateLimiter.js';
import type { SharedCallCounter } from '../limits/sharedCallCounter.js';
import type { Logger } from '../logger.js';
import { authenticateApiKey, type ApiKeyLookup, type AuthenticatedKey } from '../auth/apiKeys.js';
import { CredentialRefusedError, type RefusalReason } from '../auth/credentialRefused.js';
import { NOT_FOUND_MESSAGE, PortfolioError, toErrorReply, type ParameterProblem } from './errors.js';
import type { PortfolioServices } from './operationContext.js';

export interface PortfolioProfileDependencies {
  document: Document;
  findApiKeyByHash: ApiKeyLookup;
  services: PortfolioServices;
  /** Without callCounter (SQLite): each key's window counted in the file. */
  rateLimiter?: RateLimiter;
  /** Set (REDIS_URL, or PostgreSQL): each key's window is counted there. */
  callCounter?: SharedCallCounter;
  rateLimit: { requestsPerWindow: number; windowSeconds: number };
  now: () => number;
  logger: Logger;
}

const NO_STORE_HEADERS = Object.freeze({ 'cache-control': 'no-store', vary: 'Authorization' });

/** The Published Portfolio Read API: API keys, one limit per key, the ErrorEnvelope. */
export function portfolioProfile(deps: PortfolioProfileDependencies): ApiProfile<AuthenticatedKey, PortfolioServices> {
  return {
    name: 'portfolio',
    pathPrefix: '/api/v1',
    document: deps.document,
    operationsDirectory: new URL('./operations/', import.meta.url),
    services: deps.services,
    identify: (headers) => authenticateApiKey(headers.authorization, deps.findApiKeyByHash, deps.now()),
    authenticate: { apiKey: (key) => key },
    checkRules(rules) {
      const expected = rules.isPublic ? 'unmetered' : 'read';
      // Refusing to start keeps a typo from leaving an authenticated operation unmetered.
      if (rules.rateLimitClass !== expected) {
        throw new Error(`${rules.operationId}: x-ratelimit-class must be "${expected}", not "${rules.rateLimitClass}"`);
      }
    },
    admit: (key) => admitKey(key, deps),
    operationHeaders: (rules) => (rules.isPublic ? {} : NO_STORE_HEADERS),
    errorReply: (error, requestId) => toErrorReply(asPortfolioError(error), requestId, deps.logger),
  };
}

function admitKey(key: AuthenticatedKey, deps: PortfolioProfileDependencies): Admission | Promise<Admission> {
  const limit = key.rateLimit ?? deps.rateLimit.requestsPerWindow;
  const windowMs = deps.rateLimit.windowSeconds * 1000;
  const bucket = `portfolio-key:${key.keyId}`;
  if (deps.callCounter) {
    return deps.callCounter.countCall({ owner: key.keyId, bucket, limit, windowMs }).then(({ decision }) => keyAdmission(decision, limit, deps));
  }
  const { rateLimiter } = deps;
  if (!rateLimiter) throw new Error('the portfolio profile was built with neither a call counter nor a rate limiter');
  const decision =
    rateLimiter.countLocally(bucket, limit, windowMs) ??
    rateLimiter.countTogether(
      () => rateLimiter.consume(bucket, limit, windowMs),
      () => rateLimiter.estimate(bucket, limit, windowMs),
    );
  return keyAdmission(decision, limit, deps);
}

function keyAdmission(decision: RateLimitDecision, limit: number, deps: PortfolioProfileDependencies): Admission {
  const windowSeconds = deps.rateLimit.windowSeconds;
  const headers = {
    'x-ratelimit-limit': String(decision.limit),
    'x-ratelimit-remaining': String(decision.remaining),
    'x-ratelimit-reset': String(decision.resetAtSeconds),
  };
  if (decision.allowed) return { headers };
  return {
    headers,
    refusal: new PortfolioError(
      'rate_limited',
      `Rate limit of ${limit} requests per ${windowSeconds} seconds exceeded; retry after ${decision.retryAfterSeconds} seconds.`,
      { headers: { 'retry-after': String(decision.retryAfterSeconds) } },
    ),
  };
}

const REFUSALS: Record<RefusalReason, () => PortfolioError> = {
  unauthenticated: () => new PortfolioError('unauthenticated', 'A valid API key is required: send Authorization: Bearer <API key>.'),
  'key-revoked': () => new PortfolioError('api_key_revoked', 'This API key has been revoked.'),
  'key-expired': () => new PortfolioError('api_key_expired', 'This API key has expired.'),
  // API keys are not sessions; these cannot come from the apiKey scheme.
  'session-expired': () => REFUSALS.unauthenticated(),
  'session-revoked': () => REFUSALS.unauthenticated(),
};

/** The pipeline's failures and refused credentials in the ErrorEnvelope's vocabulary; anything else passes to the funnel as it is. */
function asPortfolioError(error: unknown): unknown {
  if (error instanceof CredentialRefusedError) return REFUSALS[error.reason]();
  if (!(error instanceof PipelineFailure)) return error;
  const failure = error.failure;
  switch (failure.kind) {
    case 'not-found':
      return new PortfolioError('not_found', NOT_FOUND_MESSAGE);
    case 'method-not-allowed':
      return new PortfolioError('method_not_allowed', `Method ${failure.method} is not allowed here; use ${failure.allowed.join(', ')}.`, {
        headers: { allow: failure.allowed.join(', ') },
      });
    case 'invalid-request':
      return invalidParameters(failure);
    case 'unavailable': {
      const why = failure.reason === 'busy' ? 'The service is busy' : 'The database cannot be reached now';
      return new PortfolioError('service_unavailable', `${why}; retry after ${failure.retryAfterSeconds} seconds.`, {
        headers: { 'retry-after': String(failure.retryAfterSeconds) },
      });
    }
    case 'malformed-request':
      return new PortfolioError('malformed_request', `The request is malformed: ${failure.reason}.`);
    case 'headers-too-large':
      return new PortfolioError('headers_too_large', `The request's headers exceed ${failure.limitBytes} bytes.`);
    case 'request-timeout':
      return new PortfolioError('request_timeout', `The request did not arrive in time (its head within ${failure.timeoutMs / 1000} seconds, all of it within the server's request timeout).`);
    case 'unsupported-media-type':
    case 'payload-too-large':
      // The portfolio API takes no request bodies; the pipeline reads none.
      return error;
  }
}

/** One ErrorEnvelope detail per failing parameter. */
function invalidParameters(failure: Extract<PipelineFailure['failure'], { kind: 'invalid-request' }>): PortfolioError {
  const details: ParameterProblem[] = [];
  for (const issue of locatedIssues(failure.errors)) {
    if (issue.location !== 'query' && issue.location !== 'path' && issue.location !== 'header') continue;
    details.push({ in: issue.location, name: issue.name, message: issue.message });
  }
  if (details.length === 0) details.push({ in: 'query', name: 'query', message: 'is invalid' });
  const summary = details.map((detail) => `"${detail.name}" ${detail.message}`).join('; ');
  return new PortfolioError('invalid_parameter', `Invalid ${details[0]!.in} parameter ${summary}.`, { details });
}
