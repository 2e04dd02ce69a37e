// @work-platform/client: a typed client of the Work-Platform API (/v1) and of the Published
// Portfolio Read API (/api/v1), made from their contracts: openapi-fetch over the types
// openapi-typescript generates, plus what the contracts promise clients (README.md here).

import createClient, { type Client } from 'openapi-fetch';
import type { paths as WorkPlatformPaths } from '../../generated/work-platform/types.js';
import type { paths as PortfolioPaths } from '../../generated/portfolio/types.js';
import { ProblemError, problemOf } from './problems.js';
import { retryingFetch, type RetryOptions } from './retries.js';

export { problemOf, ProblemError, PROBLEM_SLUGS, type Problem, type ProblemSlug, type TypedProblem } from './problems.js';
export { rateLimitOf, quotaOf, type RateLimitState, type QuotaState } from './limits.js';
export { retryingFetch, DEFAULT_BACKOFF_MS, type RetryOptions } from './retries.js';
export { discover, createAuthorizationRequest, exchangeCode, refreshTokens, OAuthError, type AuthorizationServerMetadata, type AuthorizationRequest, type TokenSet } from './pkce.js';
export { verifyWebhook, WebhookVerificationError, type WebhookEnvelope } from '../webhooks/verifyWebhook.js';
export type { components as WorkPlatformComponents, paths as WorkPlatformPaths } from '../../generated/work-platform/types.js';
export type { components as PortfolioComponents, paths as PortfolioPaths } from '../../generated/portfolio/types.js';

export interface ClientOptions extends RetryOptions {
  /** The server, e.g. `https://api.example.com` (the paths carry `/v1` or `/api/v1`). */
  baseUrl: string;
  /** A Personal Access Token, OAuth access token or session token (portfolio: an API key), or a function that returns the current one. */
  token: string | (() => string | Promise<string>);
  /** The fetch to call (default: the global one); retries wrap it. */
  fetch?: (request: Request) => Promise<Response>;
}

/** The paths whose GET answers a cursor page `{items, nextCursor}`. */
export type ListPath = {
  [P in keyof WorkPlatformPaths]: WorkPlatformPaths[P] extends { get: { responses: { 200: { content: { 'application/json': { items: unknown[]; nextCursor: string | null } } } } } } ? P : never;
}[keyof WorkPlatformPaths];

type ListGet<P extends ListPath> = WorkPlatformPaths[P]['get'];
export type ListItem<P extends ListPath> = ListGet<P>['responses'][200]['content']['application/json']['items'][number];
type ListQuery<P extends ListPath> = ListGet<P> extends { parameters: { query?: infer Q } } ? Omit<NonNullable<Q>, 'cursor'> : never;
type ListPathParameters<P extends ListPath> = ListGet<P> extends { parameters: { path: infer Path } } ? { path: Path } : { path?: never };

export type WorkPlatformClient = Client<WorkPlatformPaths> & {
  /** Every item of a list, page after page (`nextCursor`), as an async iterator; a problem throws ProblemError. */
  paginate<P extends ListPath>(path: P, init?: { params?: { query?: ListQuery<P> } & ListPathParameters<P> }): AsyncGenerator<ListItem<P>, void, undefined>;
};

function bearer(token: ClientOptions['token']) {
  return {
    async onRequest({ request }: { request: Request }) {
      request.headers.set('authorization', `Bearer ${typeof token === 'function' ? await token() : token}`);
      return request;
    },
  };
}

/** The answer's data, or a ProblemError carrying the typed problem (a non-problem failure throws a plain Error). */
export async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (response.ok) return data as T;
  const problem = problemOf(error);
  if (problem) throw new ProblemError(problem, response);
  throw new Error(`${response.status} ${response.statusText}: not a problem of this API`);
}

export function createWorkPlatformClient(options: ClientOptions): WorkPlatformClient {
  const api = createClient<WorkPlatformPaths>({ baseUrl: options.baseUrl, fetch: retryingFetch(options.fetch ?? ((request) => fetch(request)), options) });
  api.use(bearer(options.token));
  async function* paginate<P extends ListPath>(path: P, init: { params?: { query?: ListQuery<P>; path?: unknown } } = {}): AsyncGenerator<ListItem<P>, void, undefined> {
    let cursor: string | null | undefined;
    do {
      const query = { ...(init.params?.query as object | undefined), ...(cursor ? { cursor } : {}) };
      // The path is one of ListPath, whose GET the client types; the call is the same for all of them.
      const page = (await unwrap((api.GET as (path: string, init: unknown) => Promise<{ data?: unknown; error?: unknown; response: Response }>)(path, { params: { ...init.params, query } }))) as {
        items: ListItem<P>[];
        nextCursor: string | null;
      };
      yield* page.items;
      cursor = page.nextCursor;
    } while (cursor);
  }
  return Object.assign(api, { paginate }) as WorkPlatformClient;
}

/** The Published Portfolio Read API (`/api/v1`, an API key as `token`): same retries, errors as its ErrorEnvelope. */
export function createPortfolioClient(options: ClientOptions): Client<PortfolioPaths> {
  const api = createClient<PortfolioPaths>({ baseUrl: options.baseUrl, fetch: retryingFetch(options.fetch ?? ((request) => fetch(request)), options) });
  api.use(bearer(options.token));
  return api;
}
