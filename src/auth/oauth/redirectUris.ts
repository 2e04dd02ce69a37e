// Redirect URIs a client may register (RFC 9700 §4.1, RFC 8252 §7.3): absolute https URIs, or
// http ones on the loopback interface for native and command-line clients; never a fragment, a
// wildcard or credentials. Authorization requests must then name one of them exactly (string
// equality, enforced by oidc-provider).

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
const MAX_LENGTH = 2000;

/** Why a redirect URI cannot be registered, or undefined when it can. */
export function redirectUriProblem(uri: string): string | undefined {
  if (uri.length === 0) return 'is empty';
  if (uri.length > MAX_LENGTH) return `is longer than ${MAX_LENGTH} characters`;
  if (/\s/.test(uri)) return 'contains white space';
  if (uri.includes('*')) return 'contains a wildcard (*); register every address in full';
  if (uri.includes('#')) return 'has a fragment (#…); the authorization response is appended as a query';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'is not an absolute URI';
  }
  if (url.username !== '' || url.password !== '') return 'carries credentials (user:password@)';
  if (url.protocol === 'https:') return url.hostname === '' ? 'has no host' : undefined;
  if (url.protocol === 'http:') {
    return LOOPBACK_HOSTS.has(url.hostname) ? undefined : 'uses http on a host other than 127.0.0.1, [::1] or localhost; use https';
  }
  return `uses the scheme ${url.protocol.slice(0, -1)}; use https (or http on 127.0.0.1, [::1] or localhost)`;
}

/** Every problem of a list of redirect URIs, one line each; empty when all can be registered. */
export function redirectUriProblems(uris: readonly string[]): string[] {
  if (uris.length === 0) return ['at least one redirect URI is needed'];
  return uris.flatMap((uri) => {
    const problem = redirectUriProblem(uri);
    return problem ? [`${uri} ${problem}`] : [];
  });
}
