/**
 * CORS for browser callers of the Work-Platform API. Credentials are bearer tokens sent in
 * `Authorization`, never cookies, so `Access-Control-Allow-Credentials` is never set; an origin is
 * still allowed only when it is on the configured list, and always echoed, never `*`.
 */

export type CorsDecision =
  /** No `Origin`: not a browser's cross-origin call; proceed as usual. */
  | { kind: 'no-origin'; headers: Record<string, string> }
  /** `Origin` not on the list (or `null`, or malformed): answer 403 `forbidden`, preflights included. */
  | { kind: 'blocked'; origin: string; headers: Record<string, string> }
  /** A preflight from an allowed origin: answer 204 with exactly these headers. */
  | { kind: 'preflight'; headers: Record<string, string> }
  /** An actual call from an allowed origin: add these headers to its response, whatever it is. */
  | { kind: 'allowed'; headers: Record<string, string> };

export interface CorsPolicy {
  /** `headers` as Node gives them (names in lower case); other casings are found too. */
  check(method: string, headers: Record<string, string | string[] | undefined>): CorsDecision;
}

export const CORS_ALLOWED_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

export const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'If-Match', 'X-Request-Id'] as const;

/** Response headers a browser script may read. */
export const CORS_EXPOSED_HEADERS = [
  'X-Request-Id',
  'Location',
  'ETag',
  'Retry-After',
  'Idempotent-Replayed',
  'X-RateLimit-Class',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'X-RateLimit-Window-Ms',
  'X-RateLimit-Tier',
  'RateLimit',
  'RateLimit-Policy',
  'X-Quota-Limit',
  'X-Quota-Remaining',
  'X-Quota-Reset',
] as const;

/** Seconds a browser may cache a preflight answer. */
export const CORS_MAX_AGE_SECONDS = 600;

const ALLOWED_HEADER_BY_LOWER_NAME = new Map<string, string>(CORS_ALLOWED_HEADERS.map((name) => [name.toLowerCase(), name]));

/**
 * Builds the policy from the configured origins (`https://app.example.com`, with or without a
 * trailing slash or a default port). A malformed entry, `*` or `null` throws: a typo in the
 * configuration must not silently block or open the API.
 */
export function createCorsPolicy(allowedOrigins: string[]): CorsPolicy {
  const allowed = new Set<string>();
  for (const entry of allowedOrigins) {
    const origin = normalizeOrigin(entry.trim());
    if (!origin) {
      throw new TypeError(`"${entry}" is not an allowed-origin entry: write scheme://host[:port], e.g. https://app.example.com`);
    }
    allowed.add(origin);
  }

  return {
    check(method, headers): CorsDecision {
      const rawOrigin = headerValue(headers, 'origin');
      if (rawOrigin === undefined) return { kind: 'no-origin', headers: { vary: 'Origin' } };
      const origin = typeof rawOrigin === 'string' ? normalizeOrigin(rawOrigin) : undefined;
      const shownOrigin = Array.isArray(rawOrigin) ? rawOrigin.join(', ') : rawOrigin;
      if (!origin || !allowed.has(origin)) return { kind: 'blocked', origin: shownOrigin, headers: { vary: 'Origin' } };

      const requestedMethod = headerValue(headers, 'access-control-request-method');
      if (method.toUpperCase() === 'OPTIONS' && typeof requestedMethod === 'string' && requestedMethod.trim() !== '') {
        return {
          kind: 'preflight',
          headers: {
            'access-control-allow-origin': origin,
            'access-control-allow-methods': CORS_ALLOWED_METHODS.join(', '),
            'access-control-allow-headers': allowedRequestHeaders(headerValue(headers, 'access-control-request-headers')),
            'access-control-max-age': String(CORS_MAX_AGE_SECONDS),
            // The answer depends on what was asked, not only on the origin.
            vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
          },
        };
      }
      return {
        kind: 'allowed',
        headers: {
          'access-control-allow-origin': origin,
          'access-control-expose-headers': CORS_EXPOSED_HEADERS.join(', '),
          vary: 'Origin',
        },
      };
    },
  };
}

/**
 * `scheme://host[:port]` in lower case without a default port or trailing slash, or undefined when
 * the text is not an http(s) origin (a path, query, fragment or credentials disqualify it; so does
 * the opaque origin `null` that sandboxed frames and `file:` pages send).
 */
export function normalizeOrigin(text: string): string | undefined {
  // Only what a browser sends: no path, query, fragment, credentials or backslash (which URL reads as `/`).
  if (!/^https?:\/\/[^/?#\s\\@]+\/?$/i.test(text)) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.hostname === '') return undefined;
  return url.origin;
}

/**
 * The requested headers that are on the allow-list, in canonical spelling. Without a request for
 * any, the whole list. A browser sends the real call only when every requested header is echoed,
 * so one header off the list fails the preflight for that header alone.
 */
function allowedRequestHeaders(requested: string | string[] | undefined): string {
  const text = Array.isArray(requested) ? requested.join(',') : (requested ?? '');
  const names = text
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  const echoed = [...new Set(names.flatMap((name) => ALLOWED_HEADER_BY_LOWER_NAME.get(name) ?? []))];
  return (echoed.length > 0 ? echoed : CORS_ALLOWED_HEADERS).join(', ');
}

function headerValue(headers: Record<string, string | string[] | undefined>, lowerName: string): string | string[] | undefined {
  if (headers[lowerName] !== undefined) return headers[lowerName];
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() === lowerName && value !== undefined) return value;
  }
  return undefined;
}
