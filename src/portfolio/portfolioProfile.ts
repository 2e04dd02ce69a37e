import type { Document } from 'openapi-backend';
import type { ApiProfile, Admission } from '../contract/pipeline.js';
import type { RateLimitDecision, RateLimiter } from '../limits/rateLimiter.js';
import type { SharedCallCounter } from '../limits/sharedCallCounter.js';
import type { Logger } from '../logger.js';
import { authenticateApiKey, type ApiKeyLookup, type AuthenticatedKey } from '../auth/apiKeys.js';
import { PortfolioError, toErrorReply } from './errors.js';
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
    errorReply: (error, requestId) => toErrorReply(error, requestId, deps.logger),
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
