// The authorization server's own pages (oidc-provider's development pages are off): signing in
// with a session token of the application, and the consent page where the signed-in user grants
// the client some or all of the scopes it asked for, or denies. The application session lives in
// an HttpOnly, SameSite=Lax cookie scoped to /oauth and is verified like a /v1 session token on
// every use (signature, expiry, `session revoke`, the user still in its workspace).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Interaction, InteractionResults, Provider } from 'oidc-provider';
import { roleScopes, scopeDescriptions, type Scope } from '../../../generated/work-platform/rules.js';
import { asStoreUnavailable } from '../../store/database.js';
import type { OauthClient, OauthClientStore } from '../../store/oauthClients.js';
import type { UserStore } from '../../store/users.js';
import type { Caller, CallerResolver } from '../bearerTokens.js';
import { acceptedKeys, type KeyRing, type RingKey } from '../keyRings.js';
import { consentPage, errorPage, otherWorkspacePage, PAGE_HEADERS, signInPage } from './consentPage.js';

/** The cookie holding the application's session token, sent only to /oauth. */
export const APP_SESSION_COOKIE = 'oauth_app_session';
const SIGN_IN_CSRF_COOKIE = 'oauth_sign_in_csrf';
const MAX_FORM_BYTES = 16 * 1024;
const UID = /^[A-Za-z0-9_-]{1,64}$/;

export interface AppSession {
  token: string;
  caller: Caller;
}

/** The signed-in user of the application, from the session cookie; undefined when absent or no longer valid. */
export async function readAppSession(callers: CallerResolver, cookieHeader: string | undefined): Promise<AppSession | undefined> {
  const token = cookiesOf(cookieHeader).get(APP_SESSION_COOKIE);
  return token ? sessionOf(callers, token) : undefined;
}

async function sessionOf(callers: CallerResolver, token: string): Promise<AppSession | undefined> {
  try {
    const caller = await callers.resolve(`Bearer ${token}`);
    return caller.kind === 'session' ? { token, caller } : undefined;
  } catch (error) {
    // A database that cannot answer says nothing about the token: the outage, not a sign-in refused.
    if (asStoreUnavailable(error)) throw error;
    return undefined;
  }
}

export interface InteractionRouteOptions {
  provider: Provider;
  clients: Pick<OauthClientStore, 'getOauthClient'>;
  users: Pick<UserStore, 'getUser'>;
  callers: CallerResolver;
  /** The consent page's CSRF tokens are signed with the newest key and checked against every accepted one. */
  cookieKeys: KeyRing;
  cookieKeyGraceMs: number;
  now: () => number;
  /** Set the Secure flag on our cookies (the issuer is https). */
  secureCookies: boolean;
  mountPath: string;
}

export function createInteractionRoutes(options: InteractionRouteOptions) {
  const { provider, mountPath } = options;
  const signInPath = `${mountPath}/sign-in`;
  const interactionPath = (uid: string) => `${mountPath}/interaction/${uid}`;
  const csrfKey = (key: RingKey) => createHmac('sha256', key.key).update('oauth consent csrf').digest();
  /** Bound to the interaction and to the session that sees the page: a form of another session or request is refused. */
  const consentCsrfWith = (key: RingKey, uid: string, sessionToken: string) => createHmac('sha256', csrfKey(key)).update(`${uid}\n${sessionToken}`).digest('base64url');
  const consentCsrf = (uid: string, sessionToken: string) => consentCsrfWith(options.cookieKeys.newest(), uid, sessionToken);
  const consentCsrfMatches = (uid: string, sessionToken: string, given: string | null) =>
    acceptedKeys(options.cookieKeys, options.now(), options.cookieKeyGraceMs).some((key) => sameText(consentCsrfWith(key, uid, sessionToken), given));
  const cookie = (name: string, value: string, attributes: string) =>
    `${name}=${value}; ${attributes}; HttpOnly${options.secureCookies ? '; Secure' : ''}`;

  async function signIn(req: IncomingMessage, res: ServerResponse, query: string): Promise<void> {
    if (req.method === 'GET' || req.method === 'HEAD') {
      const csrf = cookiesOf(req.headers.cookie).get(SIGN_IN_CSRF_COOKIE) ?? randomBytes(32).toString('base64url');
      const returnTo = new URLSearchParams(query.slice(1)).get('return_to') ?? '';
      return sendPage(res, 200, signInPage({ action: signInPath, csrf, returnTo: safeReturnTo(returnTo) ?? '' }), {
        'set-cookie': cookie(SIGN_IN_CSRF_COOKIE, csrf, `Path=${signInPath}; SameSite=Strict; Max-Age=3600`),
      });
    }
    if (req.method !== 'POST') return sendPage(res, 405, errorPage('Method not allowed', 'Use GET or POST.'), { allow: 'GET, HEAD, POST' });
    const form = await readForm(req, res);
    if (!form) return;
    const csrf = cookiesOf(req.headers.cookie).get(SIGN_IN_CSRF_COOKIE);
    const returnTo = safeReturnTo(form.get('return_to') ?? '');
    if (!csrf || !sameText(csrf, form.get('csrf'))) {
      return sendPage(res, 403, errorPage('Sign-in refused', 'The form was not sent from this sign-in page (its CSRF token is missing or wrong). Open the sign-in page again.'));
    }
    const session = await sessionOf(options.callers, (form.get('session_token') ?? '').trim());
    if (!session) {
      return sendPage(res, 401, signInPage({ action: signInPath, csrf, returnTo: returnTo ?? '', error: 'That is not a valid session token (expired, revoked, or not a session token at all).' }));
    }
    const setCookie = cookie(APP_SESSION_COOKIE, session.token, `Path=${mountPath}; SameSite=Lax`);
    if (returnTo) {
      res.writeHead(303, { location: returnTo, 'set-cookie': setCookie, 'cache-control': 'no-store', 'content-length': '0' });
      res.end();
      return;
    }
    return sendPage(res, 200, errorPage('Signed in', 'You are signed in. Go back to the application and start the authorization again.'), { 'set-cookie': setCookie });
  }

  /** The consent page (GET) and its answer (POST). */
  async function interaction(req: IncomingMessage, res: ServerResponse, uid: string): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'POST') {
      return sendPage(res, 405, errorPage('Method not allowed', 'Use GET or POST.'), { allow: 'GET, HEAD, POST' });
    }
    let details: Interaction;
    try {
      details = await provider.interactionDetails(req, res);
    } catch (error) {
      if (asStoreUnavailable(error)) throw error;
      return sendPage(res, 400, errorPage('This authorization request has expired', 'It lasts ten minutes and belongs to the browser that started it. Go back to the application and start again.'));
    }
    if (details.uid !== uid) return sendPage(res, 400, errorPage('Wrong authorization request', 'Go back to the application and start again.'));
    const app = await readAppSession(options.callers, req.headers.cookie);
    if (!app) {
      res.writeHead(303, { location: `${signInPath}?return_to=${encodeURIComponent(interactionPath(uid))}`, 'cache-control': 'no-store', 'content-length': '0' });
      res.end();
      return;
    }
    const client = await options.clients.getOauthClient(String(details.params.client_id));
    if (!client) return sendPage(res, 400, errorPage('Unknown application', 'This application is no longer registered.'));

    const form = req.method === 'POST' ? await readForm(req, res) : undefined;
    if (req.method === 'POST') {
      if (!form) return;
      if (!consentCsrfMatches(uid, app.token, form.get('csrf'))) {
        return sendPage(res, 403, errorPage('Request refused', 'The form was not sent from this consent page (its CSRF token is missing or wrong). Go back and reload the page.'));
      }
    }
    const finish = (result: InteractionResults) => provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
    const user = await options.users.getUser(app.caller.userId);
    const userLabel = user?.name ?? user?.email ?? app.caller.userId;

    if (client.workspaceId !== app.caller.workspaceId) {
      if (form) return finish({ error: 'access_denied', error_description: 'the client belongs to another workspace' });
      return sendPage(res, 200, otherWorkspacePage({ action: interactionPath(uid), csrf: consentCsrf(uid, app.token), clientName: client.name, userLabel, workspaceName: app.caller.workspace.name }));
    }
    const requested = String(details.params.scope ?? '').split(' ').filter(Boolean);
    if (requested.includes('openid')) return finish({ error: 'invalid_scope', error_description: 'openid is not supported: this is an OAuth 2.0 server for the Work-Platform API' });
    const asked = client.scopes.filter((scope) => requested.includes(scope));
    if (asked.length === 0) return finish({ error: 'invalid_scope', error_description: `ask for one or more of the client's scopes: ${client.scopes.join(' ')}` });
    // Only what the user's role may hold (x-role-scopes) is offered, and so can be approved.
    const held = roleScopes[app.caller.role];
    const offered = asked.filter((scope) => held.includes(scope));
    if (offered.length === 0) {
      return finish({ error: 'access_denied', error_description: `a ${app.caller.role} may not grant ${asked.join(' ')}; ask a workspace owner or admin to authorize this application` });
    }

    if (!form) {
      return sendPage(res, 200, consentPage({
        action: interactionPath(uid),
        csrf: consentCsrf(uid, app.token),
        clientName: client.name,
        clientId: client.id,
        userLabel,
        workspaceName: app.caller.workspace.name,
        scopes: offered.map((scope) => ({ scope, description: scopeDescriptions[scope as Scope] })),
      }));
    }
    if (form.get('decision') !== 'allow') return finish({ error: 'access_denied', error_description: 'the user denied the request' });
    const approved = offered.filter((scope) => form.getAll('scope').includes(scope));
    if (approved.length === 0) return finish({ error: 'access_denied', error_description: 'the user granted no scope' });
    // What the role may not hold is recorded as refused with the unticked scopes, so the request is settled.
    const grantId = await saveGrant(client, app.caller.userId, details, asked, approved);
    const result: InteractionResults = { consent: { grantId } };
    // Signing in to the authorization server is done by the application's session.
    if (details.prompt.name === 'login' || details.session?.accountId !== app.caller.userId) result.login = { accountId: app.caller.userId, remember: false };
    return finish(result);
  }

  /** A new grant per consent, holding exactly what was approved; the unticked scopes are recorded as refused. */
  async function saveGrant(client: OauthClient, userId: string, details: Interaction, offered: string[], approved: string[]): Promise<string> {
    const resource = String(Array.isArray(details.params.resource) ? details.params.resource[0] : details.params.resource);
    const grant = new provider.Grant({ accountId: userId, clientId: client.id });
    grant.addResourceScope(resource, approved.join(' '));
    const refused = offered.filter((scope) => !approved.includes(scope));
    if (refused.length > 0) grant.rejectResourceScope(resource, refused.join(' '));
    return grant.save();
  }

  return {
    /** Answers the request when it is one of these routes; false leaves it to oidc-provider. */
    async handle(req: IncomingMessage, res: ServerResponse, path: string, query: string): Promise<boolean> {
      if (path === signInPath) {
        await signIn(req, res, query);
        return true;
      }
      const prefix = `${mountPath}/interaction/`;
      if (path.startsWith(prefix)) {
        const uid = path.slice(prefix.length);
        if (!UID.test(uid)) sendPage(res, 404, errorPage('Not found', 'There is no such authorization request.'));
        else await interaction(req, res, uid);
        return true;
      }
      return false;
    },
  };
}

/** Only back to a consent page of this server: never an open redirect. */
function safeReturnTo(value: string): string | undefined {
  return /^\/oauth\/interaction\/[A-Za-z0-9_-]{1,64}$/.test(value) ? value : undefined;
}

function sameText(expected: string, presented: string | null): boolean {
  if (presented === null) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Every cookie by name; the first of two with the same name wins. */
function cookiesOf(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const separator = part.indexOf('=');
    if (separator <= 0) continue;
    const name = part.slice(0, separator).trim();
    if (!cookies.has(name)) cookies.set(name, part.slice(separator + 1).trim());
  }
  return cookies;
}

/** The urlencoded body of a form post; answers 413 or 415 itself and returns undefined then. */
async function readForm(req: IncomingMessage, res: ServerResponse): Promise<URLSearchParams | undefined> {
  const type = String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    sendPage(res, 415, errorPage('Unsupported form', 'Send the form as application/x-www-form-urlencoded.'));
    return undefined;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) {
      sendPage(res, 413, errorPage('Form too large', `A form may carry at most ${MAX_FORM_BYTES} bytes.`), { connection: 'close' });
      return undefined;
    }
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function sendPage(res: ServerResponse, status: number, html: string, headers: Record<string, string> = {}): void {
  const body = Buffer.from(html);
  res.writeHead(status, { ...PAGE_HEADERS, 'content-length': String(body.length), ...headers });
  res.end(body);
}
