// OAuth 2.0 authorization code with PKCE (RFC 7636, S256) against this API's authorization
// server: discovery (RFC 8414), the authorization URL, the code exchange and refresh. For public
// clients (no secret); a confidential client adds its secret with `clientSecret`.

export interface AuthorizationServerMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  revocation_endpoint?: string;
  scopes_supported?: string[];
}

export interface TokenSet {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token?: string;
  scope?: string;
}

export class OAuthError extends Error {
  override readonly name = 'OAuthError';
  constructor(
    readonly error: string,
    readonly description: string | undefined,
    readonly status: number,
  ) {
    super(description ? `${error}: ${description}` : error);
  }
}

/** Unpadded base64url with what browsers and edge runtimes have (no Buffer). */
const base64url = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

/** `GET <origin>/.well-known/oauth-authorization-server`. */
export async function discover(baseUrl: string, fetchImpl: typeof fetch = fetch): Promise<AuthorizationServerMetadata> {
  const response = await fetchImpl(new URL('/.well-known/oauth-authorization-server', baseUrl));
  if (!response.ok) throw new OAuthError('discovery_failed', `metadata answered ${response.status}`, response.status);
  return (await response.json()) as AuthorizationServerMetadata;
}

export interface AuthorizationRequest {
  /** Send the user's browser here. */
  url: string;
  /** Keep both until the redirect comes back: `state` to check it, `codeVerifier` to exchange the code. */
  state: string;
  codeVerifier: string;
}

/** A fresh verifier (43 characters), its S256 challenge and a state, and the URL to send the user to. */
export async function createAuthorizationRequest(
  metadata: AuthorizationServerMetadata,
  request: { clientId: string; redirectUri: string; scopes: readonly string[] },
): Promise<AuthorizationRequest> {
  const codeVerifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(codeVerifier))));
  const state = base64url(crypto.getRandomValues(new Uint8Array(16)));
  const url = new URL(metadata.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: request.clientId,
    redirect_uri: request.redirectUri,
    scope: request.scopes.join(' '),
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }).toString();
  return { url: url.href, state, codeVerifier };
}

async function tokenRequest(metadata: AuthorizationServerMetadata, form: Record<string, string>, fetchImpl: typeof fetch): Promise<TokenSet> {
  const response = await fetchImpl(metadata.token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams(form).toString(),
  });
  const body = (await response.json().catch(() => ({}))) as Partial<TokenSet> & { error?: string; error_description?: string };
  if (!response.ok || typeof body.access_token !== 'string') throw new OAuthError(body.error ?? 'invalid_response', body.error_description, response.status);
  return body as TokenSet;
}

/**
 * Checks the redirect (`state` must be the one sent, `iss` the server's issuer; an `error`
 * throws) and exchanges its code for tokens.
 */
export async function exchangeCode(
  metadata: AuthorizationServerMetadata,
  redirect: string | URL,
  pending: { state: string; codeVerifier: string; clientId: string; redirectUri: string; clientSecret?: string },
  fetchImpl: typeof fetch = fetch,
): Promise<TokenSet> {
  const params = new URL(redirect).searchParams;
  if (params.get('state') !== pending.state) throw new OAuthError('state_mismatch', 'the redirect carries another state than the request', 0);
  const issuer = params.get('iss');
  if (issuer !== null && issuer !== metadata.issuer) throw new OAuthError('issuer_mismatch', `the redirect names issuer ${issuer}`, 0);
  const error = params.get('error');
  if (error !== null) throw new OAuthError(error, params.get('error_description') ?? undefined, 0);
  const code = params.get('code');
  if (code === null) throw new OAuthError('invalid_response', 'the redirect carries no code', 0);
  return tokenRequest(
    metadata,
    {
      grant_type: 'authorization_code',
      code,
      redirect_uri: pending.redirectUri,
      code_verifier: pending.codeVerifier,
      client_id: pending.clientId,
      ...(pending.clientSecret ? { client_secret: pending.clientSecret } : {}),
    },
    fetchImpl,
  );
}

/** A new access token (and a new refresh token: they rotate; keep the new one, the old is spent). */
export function refreshTokens(metadata: AuthorizationServerMetadata, refreshToken: string, client: { clientId: string; clientSecret?: string }, fetchImpl: typeof fetch = fetch): Promise<TokenSet> {
  return tokenRequest(metadata, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: client.clientId, ...(client.clientSecret ? { client_secret: client.clientSecret } : {}) }, fetchImpl);
}
