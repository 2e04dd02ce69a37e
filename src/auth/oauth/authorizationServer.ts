// The OAuth 2.0 authorization server: oidc-provider (a maintained, OpenID-certified library)
// configured as a plain OAuth server for the Work-Platform API, mounted in our node:http server.
// It owns `/oauth/*` and the metadata documents under `/.well-known/`; our own routes
// (src/auth/oauth/interactions.ts) sign the user in with the application's session and ask for
// consent. What it issues is stored by src/auth/oauth/oauthAdapter.ts; /v1 reads access tokens
// straight from the store (src/auth/bearerTokens.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ProviderClient, ProviderContext } from 'oidc-provider';
import { problemTypes, roleScopes, scopeCatalogue } from '../../../generated/work-platform/rules.js';
import { PipelineFailure, type Failure } from '../../contract/pipelineFailure.js';
import { storeOutageFailure } from '../../contract/storeOutage.js';
import type { Reply } from '../../contract/reply.js';
import type { Logger } from '../../logger.js';
import type { OauthClientStore } from '../../store/oauthClients.js';
import type { OauthRecordStore } from '../../store/oauthRecords.js';
import type { UserStore } from '../../store/users.js';
import type { CallerResolver } from '../bearerTokens.js';
import { clientAddress } from '../../http/clientAddress.js';
import { clientWentAway } from '../../http/httpAdapter.js';
import type { AddressLimit, AddressRateLimiter } from '../../limits/addressRateLimiter.js';
import type { RateLimitDecision } from '../../limits/rateLimiter.js';
import { acceptedKeys, type KeyRing } from '../keyRings.js';
import { errorPage, PAGE_HEADERS } from './consentPage.js';
import { createInteractionRoutes, readAppSession } from './interactions.js';
import { oauthAdapterFactory } from './oauthAdapter.js';
import { clientSecretMatches } from './oauthCredentials.js';
import type { SigningJwk, SigningKeySet } from './signingKeys.js';

/** Where the authorization server's own endpoints live. */
export const OAUTH_MOUNT_PATH = '/oauth';

/** Lifetimes, in seconds (see docs/oauth.md, "Decisions"). */
export const OAUTH_LIFETIMES = Object.freeze({
  accessToken: 15 * 60,
  authorizationCode: 60,
  /** Each rotation starts a fresh period; the family never outlives its grant. */
  refreshToken: 30 * 24 * 3600,
  grant: 180 * 24 * 3600,
  /** The authorization server's own browser session; the application's session still has to be valid. */
  session: 24 * 3600,
  interaction: 10 * 60,
});

export interface AuthorizationServerOptions {
  /** The server's public base URL; its origin is the issuer, and `<it>/v1` the one resource (audience). */
  publicBaseUrl: string;
  records: OauthRecordStore;
  clients: OauthClientStore;
  users: Pick<UserStore, 'getUser'>;
  /** Verifies the application's session token (signature, expiry, `session revoke`, the user still there). */
  callers: CallerResolver;
  /** Private EC P-256 JWKs (ES256), the newest signing; sign nothing that /v1 accepts, but oidc-provider needs keys of its own. */
  signingKeys: SigningKeySet;
  /** Key the authorization server's cookies and the consent page's CSRF tokens: the newest signs, any accepted one verifies. */
  cookieKeys: KeyRing;
  /** How long a replaced cookie key still verifies (PREVIOUS_KEY_GRACE_SECONDS). */
  cookieKeyGraceMs: number;
  logger: Logger;
  now: () => number;
  /** The /v1 problem type base (ERROR_TYPE_BASE): a database outage answers the API's `<base>/unavailable` problem. */
  problemTypeBase: string;
  /** The limits of its own: per client address before anything else, and on the interactions kept per client. */
  limits: AuthorizationServerLimits;
}

export interface AuthorizationServerLimits {
  /** Counts requests per client address (src/limits/addressRateLimiter.ts). */
  rateLimiter: AddressRateLimiter;
  /** Requests per address and window to the browser pages (authorize, sign-in, consent); 0: none. */
  pagesPerWindow: number;
  /** Requests per address and window to the token, introspection and revocation endpoints; 0: none. */
  tokenCallsPerWindow: number;
  windowSeconds: number;
  /** Reverse proxies in front (TRUST_PROXY): see src/http/clientAddress.ts. */
  trustProxy: number;
  /** Authorizations in progress kept per client; one more drops the oldest. */
  interactionsPerClient: number;
}

export interface AuthorizationServer {
  issuer: string;
  /** The resource indicator of the Work-Platform API: the audience of every access token. */
  resource: string;
  /** True for the paths this server answers. */
  owns(path: string): boolean;
  /** `body`: a JSON body the adapter already read and checked (oidc-provider then reads it from `req.body`). */
  handle(req: IncomingMessage, res: ServerResponse, requestId: string, body?: Buffer): Promise<void>;
  /**
   * What the HTTP adapter refuses on these paths (two Authorization headers, a body too large or too deep, Node's
   * parser errors), in the OAuth error shape; a database outage as a problem that also carries OAuth's `error`.
   */
  errorReply(error: unknown, requestId: string): Reply;
}

/** The resource indicator of the Work-Platform API, the audience of every access token: `<public base URL>/v1`. */
export function oauthResourceFor(publicBaseUrl: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}/v1`;
}

const METADATA_PATH = '/.well-known/oauth-authorization-server';
const RESOURCE_METADATA_PATHS = new Set(['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/v1']);
/** The endpoints whose callers are programs (RFC 6749 §5.2 JSON errors), counted in a bucket of their own. */
const TOKEN_ENDPOINT_PATHS = new Set([`${OAUTH_MOUNT_PATH}/token`, `${OAUTH_MOUNT_PATH}/introspect`, `${OAUTH_MOUNT_PATH}/revoke`]);

/**
 * The limit a request to `path` counts against: the browser pages (authorization and its resume,
 * sign-in, consent), where each request may store a record; the token endpoints; nothing for the
 * metadata and the key set, which write nothing and are cacheable.
 */
function addressLimitOf(path: string, limits: AuthorizationServerLimits): (AddressLimit & { browser: boolean }) | undefined {
  const windowMs = limits.windowSeconds * 1000;
  if (TOKEN_ENDPOINT_PATHS.has(path)) return { name: 'oauth-token', limit: limits.tokenCallsPerWindow, windowMs, browser: false };
  const browser =
    path === `${OAUTH_MOUNT_PATH}/authorize` ||
    path.startsWith(`${OAUTH_MOUNT_PATH}/authorize/`) ||
    path === `${OAUTH_MOUNT_PATH}/sign-in` ||
    path.startsWith(`${OAUTH_MOUNT_PATH}/interaction/`);
  return browser ? { name: 'oauth-pages', limit: limits.pagesPerWindow, windowMs, browser: true } : undefined;
}

/** Routes where a person is looking at the browser: errors there are pages, everywhere else the RFCs' JSON. */
const BROWSER_ROUTES = new Set(['authorization', 'resume']);

export function createAuthorizationServer(options: AuthorizationServerOptions): AuthorizationServer {
  const publicBase = new URL(options.publicBaseUrl);
  const issuer = publicBase.origin;
  const resource = oauthResourceFor(options.publicBaseUrl);
  // oidc-provider (with Koa, about 260 modules) is loaded and configured on the first request that needs it: it was
  // a quarter of the server's start-up. What could make it refuse to start, the signing keys, is checked at start-up
  // (loadSigningKeys); the issuer comes from the checked public base URL. Its key set is fixed when it is configured:
  // when the signing keys change (admin keys rotate oauth-signing), the next request configures it again. Everything
  // it keeps lives in the store, so requests already under way finish on the one they started with.
  let started: { keys: readonly SigningJwk[]; routes: Promise<ProviderRoutes> } | undefined;
  const providerRoutes = () => {
    const keys = options.signingKeys.keys();
    if (started?.keys !== keys) {
      const routes = startProvider(options, publicBase, resource, keys).catch((error: unknown) => {
        // Not kept: the next request tries again rather than finding OAuth down until a restart.
        if (started?.routes === routes) started = undefined;
        throw error;
      });
      started = { keys, routes };
    }
    return started.routes;
  };

  return {
    issuer,
    resource,
    owns(path) {
      return path === METADATA_PATH || RESOURCE_METADATA_PATHS.has(path) || path === OAUTH_MOUNT_PATH || path.startsWith(`${OAUTH_MOUNT_PATH}/`);
    },
    errorReply: (error, requestId) => oauthErrorReply(error, requestId, options.problemTypeBase),
    async handle(req, res, requestId, body) {
      res.setHeader('x-request-id', requestId);
      if (body !== undefined) (req as IncomingMessage & { body?: Buffer }).body = body;
      req.headers['x-forwarded-host'] = publicBase.host;
      req.headers['x-forwarded-proto'] = publicBase.protocol.slice(0, -1);
      const target = req.url ?? '/';
      const queryStart = target.indexOf('?');
      const path = queryStart >= 0 ? target.slice(0, queryStart) : target;
      const query = queryStart >= 0 ? target.slice(queryStart) : '';
      const method = req.method ?? 'GET';
      /** Answers a database outage with the 503 page; false when the error is no outage or an answer has begun. */
      const answerOutageAsPage = (error: unknown): boolean => {
        const outage = storeOutageFailure(error);
        if (!outage || res.headersSent) return false;
        options.logger.warn('oauth database unavailable', { requestId, reason: outage.failure.kind === 'unavailable' ? outage.failure.reason : undefined });
        const page = Buffer.from(outagePage(outage));
        res.writeHead(503, { ...PAGE_HEADERS, ...outageHeaders(outage), 'content-length': String(page.length) });
        res.end(page);
        return true;
      };

      if (path === METADATA_PATH) return (await providerRoutes()).toProvider(req, res, `${OAUTH_MOUNT_PATH}${METADATA_PATH}${query}`);
      if (RESOURCE_METADATA_PATHS.has(path)) {
        if (method !== 'GET' && method !== 'HEAD') return sendJson(res, 405, { error: 'invalid_request', error_description: 'use GET' }, { allow: 'GET, HEAD' });
        // RFC 9728: what a client of /v1 needs to find the authorization server.
        return sendJson(res, 200, {
          resource,
          authorization_servers: [issuer],
          scopes_supported: [...scopeCatalogue],
          bearer_methods_supported: ['header'],
          resource_documentation: `${resource}/openapi.json`,
        }, { 'cache-control': 'public, max-age=300' });
      }
      // The metadata lives at the issuer's well-known address only (RFC 8414), not under the mount.
      if (path.startsWith(`${OAUTH_MOUNT_PATH}/.well-known/`)) return sendJson(res, 404, { error: 'not_found', error_description: `see ${issuer}${METADATA_PATH}` });
      // Before oidc-provider sees the request: a refused one stores nothing and reads nothing.
      const addressLimit = addressLimitOf(path, options.limits);
      if (addressLimit) {
        let decision: RateLimitDecision;
        try {
          decision = await options.limits.rateLimiter.admit(addressLimit, clientAddress(req, options.limits.trustProxy));
        } catch (error) {
          // Counters the database cannot answer: a page on the browser routes; the JSON endpoints' 503 is the adapter's.
          if (addressLimit.browser && answerOutageAsPage(error)) return;
          throw error;
        }
        if (!decision.allowed) return refuseAsRateLimited(res, addressLimit, decision);
      }
      const { interactions, toProvider } = await providerRoutes();
      try {
        if (await interactions.handle(req, res, path, query)) return;
      } catch (error) {
        // Our sign-in and consent routes are pages a person is looking at: an outage is a page too.
        if (answerOutageAsPage(error)) return;
        throw error;
      }
      return toProvider(req, res, target);
    },
  };
}

interface ProviderRoutes {
  /** The consent and sign-in routes under /oauth/interaction. */
  interactions: ReturnType<typeof createInteractionRoutes>;
  /** Hands a request to oidc-provider as mounted at /oauth. */
  toProvider(req: IncomingMessage & { originalUrl?: string }, res: ServerResponse, target: string): Promise<void>;
}

async function startProvider(options: AuthorizationServerOptions, publicBase: URL, resource: string, signingKeys: readonly SigningJwk[]): Promise<ProviderRoutes> {
  const { default: Provider, errors, interactionPolicy } = await import('oidc-provider');
  const issuer = publicBase.origin;
  /** The cookie keys in force, newest (the one that signs) first, as Koa's Keygrip takes them. */
  const cookieKeys = () => acceptedKeys(options.cookieKeys, options.now(), options.cookieKeyGraceMs).map((key) => Buffer.from(key.key).toString('base64url'));

  const policy = interactionPolicy.base();
  // The authorization server's session follows the application's: signed out of the application,
  // or signed in there as someone else, means signing in again (our sign-in page, not a password).
  policy.get('login')!.checks.add(
    new interactionPolicy.Check('app_session_mismatch', 'the application session is missing or names another user', async (ctx) => {
      const app = await readAppSession(options.callers, ctx.get('cookie'));
      return app && app.caller.userId === ctx.oidc?.session?.accountId ? interactionPolicy.Check.NO_NEED_TO_PROMPT : interactionPolicy.Check.REQUEST_PROMPT;
    }),
  );

  const clientScopes = async (client: ProviderClient | undefined): Promise<string[]> =>
    (client && (await options.clients.getOauthClient(client.clientId))?.scopes) || [];

  const provider = new Provider(issuer, {
    adapter: oauthAdapterFactory(options.records, options.clients, options.now, options.limits.interactionsPerClient),
    clients: [],
    // The newest signs: oidc-provider takes the first key of an algorithm.
    jwks: { keys: [...signingKeys].reverse() },
    cookies: {
      keys: cookieKeys(),
      names: { session: 'oauth_session', interaction: 'oauth_interaction', resume: 'oauth_resume' },
      long: { httpOnly: true, sameSite: 'lax', path: OAUTH_MOUNT_PATH },
      short: { httpOnly: true, sameSite: 'lax', path: OAUTH_MOUNT_PATH },
    },
    routes: {
      authorization: '/authorize',
      token: '/token',
      introspection: '/introspect',
      revocation: '/revoke',
      jwks: '/jwks',
    },
    async findAccount(ctx: ProviderContext, sub: string) {
      // A user removed from the workspace, or a client of another workspace: no account, invalid_grant.
      const user = await options.users.getUser(sub);
      if (!user) return undefined;
      const clientId = ctx.oidc?.client?.clientId;
      if (clientId !== undefined && (await options.clients.getOauthClient(clientId))?.workspaceId !== user.workspaceId) return undefined;
      return { accountId: sub, claims: async () => ({ sub }) };
    },
    responseTypes: ['code'],
    // S256 is the only method oidc-provider 9 implements; `plain` and no challenge are refused.
    pkce: { required: () => true },
    clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post'],
    scopes: [],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: 'ES256',
    },
    enabledJWA: { idTokenSigningAlgValues: ['ES256'] },
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        // Without a resource oidc-provider keeps only OpenID scopes; every request is for /v1.
        defaultResource: async () => resource,
        useGrantedResource: async () => true,
        async getResourceServerInfo(_ctx: ProviderContext, indicator: string, client: ProviderClient) {
          if (indicator !== resource) throw new errors.InvalidTarget();
          return { scope: (await clientScopes(client)).join(' '), audience: resource, accessTokenTTL: OAUTH_LIFETIMES.accessToken, accessTokenFormat: 'opaque' };
        },
      },
      // A client learns about its own tokens only, public or confidential; anything else is inactive.
      introspection: { enabled: true, allowedPolicy: async (_ctx: ProviderContext, client: ProviderClient, token: { clientId?: string }) => token.clientId === client.clientId },
      // Another client's token is left alone, and the answer is 200 all the same (RFC 7009 §2.2).
      revocation: { enabled: true, allowedPolicy: async (_ctx: ProviderContext, client: ProviderClient, token: { clientId?: string }) => token.clientId === client.clientId },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      // Not offered: /v1 checks bearer tokens only, so a sender-constrained (DPoP) token must never be issued.
      dPoP: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
    },
    issueRefreshToken: async (_ctx: ProviderContext, client: { grantTypeAllowed(type: string): boolean }) => client.grantTypeAllowed('refresh_token'),
    // A grant reused without asking (the same browser authorizing the client again) must still fit its user's
    // role: one approved before a demotion holds scopes the role lacks, so the consent page is shown again
    // and offers only what the role holds now. (Tokens are bounded by the role at every call as well.)
    async loadExistingGrant(ctx: ProviderContext) {
      const oidc = ctx.oidc as unknown as {
        result?: { consent?: { grantId?: string } };
        session: { grantIdFor(clientId: string): string | undefined };
        client: ProviderClient;
        provider: { Grant: { find(id: string): Promise<{ accountId: string; resources?: Record<string, string> } | undefined> } };
      };
      const grantId = oidc.result?.consent?.grantId || oidc.session.grantIdFor(oidc.client.clientId);
      const grant = grantId ? await oidc.provider.Grant.find(grantId) : undefined;
      if (!grant) return undefined;
      const user = await options.users.getUser(grant.accountId);
      if (!user) return undefined;
      const held: readonly string[] = roleScopes[user.role];
      const granted = Object.values(grant.resources ?? {}).flatMap((scopes) => scopes.split(' ').filter(Boolean));
      return granted.every((scope) => held.includes(scope)) ? grant : undefined;
    },
    // Every refresh rotates; presenting a used refresh token revokes its grant's every token.
    rotateRefreshToken: true,
    // Tokens do not end with the authorization server's browser session.
    expiresWithSession: async () => false,
    ttl: {
      AccessToken: OAUTH_LIFETIMES.accessToken,
      AuthorizationCode: OAUTH_LIFETIMES.authorizationCode,
      RefreshToken: OAUTH_LIFETIMES.refreshToken,
      Grant: OAUTH_LIFETIMES.grant,
      Session: OAUTH_LIFETIMES.session,
      Interaction: OAUTH_LIFETIMES.interaction,
      IdToken: 5 * 60,
    },
    interactions: {
      policy,
      url: async (_ctx: ProviderContext, interaction: { uid: string }) => `${OAUTH_MOUNT_PATH}/interaction/${interaction.uid}`,
    },
    clientBasedCORS: () => false,
    async renderError(ctx: ProviderContext, out: { error: string; error_description?: string }) {
      if (!BROWSER_ROUTES.has(ctx.oidc?.route ?? '')) {
        ctx.type = 'application/json';
        ctx.body = out;
        return;
      }
      for (const [name, value] of Object.entries(PAGE_HEADERS)) ctx.res.setHeader(name, value);
      ctx.type = 'html';
      ctx.body = errorPage('The authorization request cannot go on', `${out.error}: ${out.error_description ?? ''}`);
    },
  });
  // Everything oidc-provider prints (metadata, redirects, cookie flags) follows from the request's
  // host and scheme; handle() pins both to the issuer, whatever the client sent.
  provider.proxy = true;
  // Koa reads `keys` for each request's cookies: a rotated cookie key signs from the next request on, and a
  // cookie signed with a replaced one still verifies during the grace period (and is signed again with the newest).
  Object.defineProperty(provider, 'keys', { get: cookieKeys, set: () => undefined, configurable: true });
  // Client secrets are stored as SHA-256 hashes: oidc-provider hands this method the hash.
  provider.Client.prototype.compareClientSecret = async function compareClientSecret(this: ProviderClient, presented: string) {
    return clientSecretMatches(presented, this.clientSecret);
  };
  /** Requests that met a database outage, found by oidc-provider's `server_error` event or thrown past it. */
  const outages = new WeakMap<ProviderContext, PipelineFailure>();
  provider.use(async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const outage = storeOutageFailure(error);
      if (!outage) throw error;
      outages.set(ctx, outage);
    }
    const outage = outages.get(ctx);
    if (outage) return answerOutage(ctx, outage, options.problemTypeBase);
    if (ctx.oidc?.route === 'discovery' && ctx.body && typeof ctx.body === 'object') {
      (ctx.body as Record<string, unknown>).scopes_supported = [...scopeCatalogue];
    }
    // No route of the library matched (an unknown path, or GET on /token): its answer in the OAuth vocabulary, not Koa's text.
    if (ctx.status === 404 && ctx.body === undefined) {
      ctx.status = 404;
      ctx.body = { error: 'invalid_request', error_description: `unrecognized route or not allowed method (${ctx.method} on ${OAUTH_MOUNT_PATH}${ctx.path})` };
    }
  });
  provider.on('server_error', (ctx: ProviderContext, error: Error) => {
    // A client that went away is the adapter's client-closed line, not a server error.
    if (clientWentAway(ctx.req, ctx.res)) return;
    // The database cannot answer now: the middleware above turns oidc-provider's 500 into the declared 503.
    const outage = storeOutageFailure(error);
    if (outage) {
      outages.set(ctx, outage);
      options.logger.warn('oauth database unavailable', { requestId: ctx.res.getHeader('x-request-id'), route: ctx.oidc?.route, reason: outage.failure.kind === 'unavailable' ? outage.failure.reason : undefined });
      return;
    }
    options.logger.error('oauth server error', { requestId: ctx.res.getHeader('x-request-id'), route: ctx.oidc?.route, error });
  });
  provider.on('grant.revoked', (ctx: ProviderContext, grantId: string) =>
    options.logger.info('oauth grant revoked', { requestId: ctx.res.getHeader('x-request-id'), route: ctx.oidc?.route, grantId }),
  );
  // Koa reports aborted or truncated requests here after oidc-provider has answered them.
  // A request its client cut off is logged once, by the adapter, as client-closed.
  provider.on('error', (error: Error, ctx?: ProviderContext) => {
    if (ctx && clientWentAway(ctx.req, ctx.res)) return;
    options.logger.warn('oauth request failed', { requestId: ctx?.res.getHeader('x-request-id'), error: error.message });
  });

  const callback = provider.callback();
  const interactions = createInteractionRoutes({
    provider,
    clients: options.clients,
    users: options.users,
    callers: options.callers,
    cookieKeys: options.cookieKeys,
    cookieKeyGraceMs: options.cookieKeyGraceMs,
    now: options.now,
    secureCookies: publicBase.protocol === 'https:',
    mountPath: OAUTH_MOUNT_PATH,
  });

  /** oidc-provider takes its mount path from `originalUrl` minus `url`, as Express's `app.use(prefix, …)` would hand it. */
  const toProvider = (req: IncomingMessage & { originalUrl?: string }, res: ServerResponse, target: string) => {
    req.originalUrl = target;
    req.url = target.slice(OAUTH_MOUNT_PATH.length) || '/';
    return callback(req, res);
  };

  return { interactions, toProvider };
}

/**
 * A database outage on /oauth: 503 with Retry-After. Where a person is looking at the browser (the
 * authorization endpoint asked for HTML, the sign-in and consent pages) a page: the client cannot be
 * looked up, so there is no checked redirect URI to send `temporarily_unavailable` to. Elsewhere a
 * problem (RFC 9457, the API's `unavailable`) that also carries OAuth's `error`: `temporarily_unavailable`.
 */
function answerOutage(ctx: ProviderContext, outage: PipelineFailure, problemTypeBase: string): void {
  const wantsPage = ctx.response.is('html') || (BROWSER_ROUTES.has(ctx.oidc?.route ?? '') && ctx.accepts('json', 'html') === 'html');
  ctx.status = 503;
  for (const [name, value] of Object.entries({ ...(wantsPage ? PAGE_HEADERS : {}), ...outageHeaders(outage) })) ctx.set(name, value);
  if (wantsPage) {
    ctx.type = 'html';
    ctx.body = outagePage(outage);
    return;
  }
  ctx.type = 'application/problem+json';
  ctx.body = outageProblem(outage, String(ctx.res.getHeader('x-request-id') ?? ''), problemTypeBase);
}

function retryAfterOf(outage: PipelineFailure): number {
  return outage.failure.kind === 'unavailable' ? outage.failure.retryAfterSeconds : 1;
}

function outageHeaders(outage: PipelineFailure): Record<string, string> {
  return { 'retry-after': String(retryAfterOf(outage)), 'cache-control': 'no-store' };
}

function outageDetail(outage: PipelineFailure): string {
  const why = outage.failure.kind === 'unavailable' && outage.failure.reason === 'busy' ? 'The database is busy with another writer' : 'The database cannot be reached now (down or restarting)';
  return `${why}. Retry after ${retryAfterOf(outage)} seconds.`;
}

function outagePage(outage: PipelineFailure): string {
  return errorPage('Temporarily unavailable', outageDetail(outage));
}

function outageProblem(outage: PipelineFailure, requestId: string, problemTypeBase: string): Record<string, unknown> {
  const detail = outageDetail(outage);
  return {
    type: `${problemTypeBase.replace(/\/+$/, '')}/unavailable`,
    title: problemTypes.unavailable.title,
    status: 503,
    detail,
    requestId,
    error: 'temporarily_unavailable',
    error_description: detail,
  };
}

/** The status of each failure the adapter (or Node's parser) refuses before oidc-provider sees the request. */
const STATUS_OF_FAILURE: Partial<Record<Failure['kind'], number>> = {
  'malformed-request': 400,
  'payload-too-large': 413,
  'request-timeout': 408,
  'headers-too-large': 431,
};

/**
 * The adapter's refusals in the OAuth error shape (RFC 6749 §5.2: `error`, `error_description`):
 * `invalid_request`, with the HTTP status of the failure; a database outage is `answerOutage`'s problem. Anything
 * else is the server's fault.
 */
export function oauthErrorReply(error: unknown, requestId: string, problemTypeBase: string): Reply {
  // Of the family, the OAuth surface meets only the adapter's refusals: anything else is its 500.
  const refused = error instanceof PipelineFailure ? error : undefined;
  if (refused?.failure.kind === 'unavailable') {
    return { status: 503, headers: { ...outageHeaders(refused), 'content-type': 'application/problem+json' }, body: outageProblem(refused, requestId, problemTypeBase) };
  }
  const headers = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };
  const status = refused && STATUS_OF_FAILURE[refused.failure.kind];
  if (refused && status !== undefined) {
    return { status, headers, body: { error: 'invalid_request', error_description: describeFailure(refused.failure) } };
  }
  return { status: 500, headers, body: { error: 'server_error', error_description: `unexpected error; quote ${requestId}` } };
}

function describeFailure(failure: Failure): string {
  switch (failure.kind) {
    case 'malformed-request':
      return `the request is malformed: ${failure.reason}`;
    case 'payload-too-large':
      return `the request body exceeds ${failure.limitBytes} bytes`;
    case 'request-timeout':
      return 'the request did not arrive in time';
    case 'headers-too-large':
      return `the request's headers exceed ${failure.limitBytes} bytes`;
    default:
      return failure.kind;
  }
}

/**
 * 429 with Retry-After: a page where a person is looking at the browser; on the token endpoints
 * RFC 6749's error JSON with `temporarily_unavailable`, the registered code for "temporary
 * overloading" (RFC 6749 §4.1.2.1): §5.2 has no code for a limit, and a client that knows only
 * the registered codes still reads it as "try again later".
 */
function refuseAsRateLimited(res: ServerResponse, limit: AddressLimit & { browser: boolean }, decision: RateLimitDecision): void {
  const retryAfter = String(decision.retryAfterSeconds);
  const why = `more than ${limit.limit} requests in ${limit.windowMs / 1000} seconds came from this address`;
  if (!limit.browser) {
    return sendJson(res, 429, { error: 'temporarily_unavailable', error_description: `${why}; retry after ${retryAfter} s` }, { 'retry-after': retryAfter });
  }
  const page = Buffer.from(errorPage('Too many requests', `Too many sign-in and authorization requests: ${why}. Try again in ${retryAfter} seconds.`));
  res.writeHead(429, { ...PAGE_HEADERS, 'content-length': String(page.length), 'retry-after': retryAfter });
  res.end(page);
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

