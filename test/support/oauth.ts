// Helpers of the OAuth 2.0 suites: clients registered through the production path, a small
// cookie-keeping "browser" over plain HTTP that signs in with a session token and answers the
// consent page the way a person would (its CSRF token, ticked scopes), and discovery by
// oauth4webapi, the third-party client the flows are driven with.
import * as oauth from 'oauth4webapi';
import { expect } from 'vitest';
import { registerOauthClient } from '../../src/auth/oauth/clientRegistration.js';
import type { StoreSource } from '../../src/store/engine.js';
import { createOauthClientStore } from '../../src/store/oauthClients.js';

/** oauth4webapi refuses http unless told; the test server speaks http on the loopback interface. */
export const insecure = { [oauth.allowInsecureRequests]: true } as const;

export const TEST_REDIRECT_URI = 'http://127.0.0.1:8976/callback';

export interface RegisteredClient {
  id: string;
  secret?: string;
  /** oauth4webapi's view of the client. */
  client: oauth.Client;
  auth: oauth.ClientAuth;
}

export async function registerTestClient(
  source: StoreSource,
  options: { workspaceId: string; scopes: string[]; redirectUris?: string[]; confidential?: boolean; name?: string },
): Promise<RegisteredClient> {
  const created = await registerOauthClient(createOauthClientStore(source), {
    workspaceId: options.workspaceId,
    name: options.name ?? 'Test client',
    redirectUris: options.redirectUris ?? [TEST_REDIRECT_URI],
    scopes: options.scopes,
    confidential: options.confidential ?? false,
  });
  return created.secret
    ? { id: created.id, secret: created.secret, client: { client_id: created.id }, auth: oauth.ClientSecretBasic(created.secret) }
    : { id: created.id, client: { client_id: created.id, token_endpoint_auth_method: 'none' }, auth: oauth.None() };
}

/** The authorization server's metadata, as a client finds it: RFC 8414 discovery at the issuer. */
export async function discover(publicBaseUrl: string): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(new URL(publicBaseUrl).origin);
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
}

export interface AuthorizationRequest {
  url: string;
  verifier: string;
  state: string;
}

/** An authorization request with PKCE (S256) and state; `extra` adds or replaces parameters. */
export async function authorizationRequest(
  as: oauth.AuthorizationServer,
  clientId: string,
  scope: string,
  extra: Record<string, string> = {},
): Promise<AuthorizationRequest> {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({
    client_id: clientId,
    response_type: 'code',
    redirect_uri: TEST_REDIRECT_URI,
    scope,
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...extra,
  }).toString();
  return { url: url.href, verifier, state };
}

export interface Page {
  url: string;
  status: number;
  html: string;
  headers: Headers;
}

/** A user agent that keeps cookies (by name and path) and follows redirects until told to stop. */
export class TestBrowser {
  private readonly jar = new Map<string, { value: string; path: string }>();

  cookie(name: string): string | undefined {
    return this.jar.get(name)?.value;
  }

  async request(url: string, init: RequestInit = {}): Promise<Response> {
    const target = new URL(url);
    const cookies = [...this.jar.entries()]
      .filter(([, cookie]) => target.pathname === cookie.path || target.pathname.startsWith(cookie.path.endsWith('/') ? cookie.path : `${cookie.path}/`))
      .map(([name, cookie]) => `${name}=${cookie.value}`);
    const response = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), ...(cookies.length > 0 ? { cookie: cookies.join('; ') } : {}) },
    });
    for (const header of response.headers.getSetCookie()) this.keep(header, target.pathname);
    return response;
  }

  /** Follows redirects from `url`; stops at a URL under `stopAt` (not requested) or at the first non-redirect answer. */
  async follow(url: string, stopAt: string, init?: RequestInit): Promise<Page> {
    let response = await this.request(url, init);
    for (let hop = 0; hop < 10; hop += 1) {
      if (response.status < 300 || response.status >= 400) {
        return { url, status: response.status, html: await response.text(), headers: response.headers };
      }
      url = new URL(response.headers.get('location')!, url).href;
      if (url.startsWith(stopAt)) return { url, status: 0, html: '', headers: response.headers };
      response = await this.request(url);
    }
    throw new Error('too many redirects');
  }

  /** Posts a form from the page it was read from. */
  async submit(page: Page, fields: [string, string][], stopAt: string): Promise<Page> {
    const action = new URL(/<form method="post" action="([^"]+)"/.exec(page.html)![1]!.replaceAll('&#38;', '&'), page.url).href;
    return this.follow(action, stopAt, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
  }

  private keep(header: string, requestPath: string): void {
    const [pair, ...attributes] = header.split(';').map((part) => part.trim());
    const separator = pair!.indexOf('=');
    const name = pair!.slice(0, separator);
    const value = pair!.slice(separator + 1);
    let path = requestPath.replace(/\/[^/]*$/, '') || '/';
    let expired = false;
    for (const attribute of attributes) {
      const [key, attributeValue = ''] = attribute.split('=');
      if (key!.toLowerCase() === 'path') path = attributeValue;
      if (key!.toLowerCase() === 'expires' && Date.parse(attributeValue) < Date.now()) expired = true;
      if (key!.toLowerCase() === 'max-age' && Number(attributeValue) <= 0) expired = true;
    }
    if (expired || value === '') this.jar.delete(name);
    else this.jar.set(name, { value, path });
  }
}

/** A hidden form field of a page. */
export function hiddenField(html: string, name: string): string {
  const value = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)"`).exec(html)?.[1];
  if (value === undefined) throw new Error(`no hidden field ${name} in ${html.slice(0, 400)}`);
  return value;
}

/** The scopes a consent page offers, in order. */
export function offeredScopes(html: string): string[] {
  return [...html.matchAll(/name="scope" value="([^"]+)"/g)].map((match) => match[1]!);
}

/**
 * From the authorization URL to the consent page: signs in with the session token on the way
 * when the browser has no application session yet.
 */
export async function openConsentPage(browser: TestBrowser, authorizationUrl: string, sessionToken: string, stopAt = TEST_REDIRECT_URI): Promise<Page> {
  let page = await browser.follow(authorizationUrl, stopAt);
  if (page.url.includes('/oauth/sign-in')) {
    expect(page.status).toBe(200);
    page = await browser.submit(page, [['csrf', hiddenField(page.html, 'csrf')], ['return_to', hiddenField(page.html, 'return_to')], ['session_token', sessionToken]], stopAt);
  }
  return page;
}

/** Approves the consent page with exactly these scopes ticked; returns where the browser lands. */
export function approve(browser: TestBrowser, consent: Page, scopes: string[], stopAt = TEST_REDIRECT_URI): Promise<Page> {
  return browser.submit(consent, [['csrf', hiddenField(consent.html, 'csrf')], ['decision', 'allow'], ...scopes.map((scope): [string, string] => ['scope', scope])], stopAt);
}

/** The authorization response at `callback` checked (state, iss), and its code exchanged for tokens with the request's verifier. */
export async function exchangeCode(
  as: oauth.AuthorizationServer,
  registered: Pick<RegisteredClient, 'client' | 'auth'>,
  callback: URL,
  request: Pick<AuthorizationRequest, 'state' | 'verifier'>,
  redirectUri = TEST_REDIRECT_URI,
): Promise<oauth.TokenEndpointResponse> {
  const params = oauth.validateAuthResponse(as, registered.client, callback, request.state);
  const response = await oauth.authorizationCodeGrantRequest(as, registered.client, registered.auth, params, redirectUri, request.verifier, insecure);
  return oauth.processAuthorizationCodeResponse(as, registered.client, response);
}

/** The whole way from the authorization request to tokens: consent with `grant` ticked, then the code exchange. */
export async function authorizeAndExchange(
  as: oauth.AuthorizationServer,
  registered: RegisteredClient,
  options: { browser?: TestBrowser; sessionToken: string; scope: string; grant?: string[] },
): Promise<oauth.TokenEndpointResponse> {
  const browser = options.browser ?? new TestBrowser();
  const request = await authorizationRequest(as, registered.id, options.scope);
  const consent = await openConsentPage(browser, request.url, options.sessionToken);
  const landed = consent.url.startsWith(TEST_REDIRECT_URI) ? consent : await approve(browser, consent, options.grant ?? options.scope.split(' '));
  expect(landed.url.startsWith(TEST_REDIRECT_URI), `${landed.status} ${landed.url} ${landed.html.slice(0, 300)}`).toBe(true);
  return exchangeCode(as, registered, new URL(landed.url), request);
}
