import { describe, expect, it } from 'vitest';
import { createCorsPolicy, normalizeOrigin, type CorsDecision } from '../../src/http/cors.js';

const APP = 'https://app.example.com';
const policy = createCorsPolicy([APP, 'http://localhost:5173/', 'HTTPS://Admin.Example.com:443']);

const EXPOSED =
  'X-Request-Id, Location, ETag, Retry-After, Idempotent-Replayed, X-RateLimit-Class, X-RateLimit-Limit, ' +
  'X-RateLimit-Remaining, X-RateLimit-Reset, X-RateLimit-Window-Ms, X-RateLimit-Tier, RateLimit, RateLimit-Policy, ' +
  'X-Quota-Limit, X-Quota-Remaining, X-Quota-Reset';
const ALL_ALLOWED_HEADERS = 'Authorization, Content-Type, Idempotency-Key, If-Match, X-Request-Id';

function preflight(origin: string, extra: Record<string, string> = {}): CorsDecision {
  return policy.check('OPTIONS', { origin, 'access-control-request-method': 'PATCH', ...extra });
}

describe('CORS: calls without Origin', () => {
  it.each(['GET', 'POST', 'OPTIONS'])('%s without Origin proceeds', (method) => {
    expect(policy.check(method, { authorization: 'Bearer x' })).toEqual({ kind: 'no-origin', headers: { vary: 'Origin' } });
  });

  it('a preflight-looking OPTIONS without Origin is not a browser preflight', () => {
    expect(policy.check('OPTIONS', { 'access-control-request-method': 'POST' }).kind).toBe('no-origin');
  });
});

describe('CORS: allowed origins, actual calls', () => {
  it.each(['GET', 'POST', 'PATCH', 'DELETE', 'get'])('%s gets the echoed origin and the exposed headers', (method) => {
    expect(policy.check(method, { origin: APP })).toEqual({
      kind: 'allowed',
      headers: {
        'access-control-allow-origin': APP,
        'access-control-expose-headers': EXPOSED,
        vary: 'Origin',
      },
    });
  });

  it('never answers with *, never allows credentials, never sends preflight-only headers', () => {
    const decision = policy.check('GET', { origin: APP });
    expect(decision.headers['access-control-allow-origin']).not.toBe('*');
    expect(decision.headers).not.toHaveProperty('access-control-allow-credentials');
    expect(decision.headers).not.toHaveProperty('access-control-allow-methods');
    expect(decision.headers).not.toHaveProperty('access-control-max-age');
  });

  it('an OPTIONS without Access-Control-Request-Method is an actual call', () => {
    expect(policy.check('OPTIONS', { origin: APP }).kind).toBe('allowed');
    expect(policy.check('OPTIONS', { origin: APP, 'access-control-request-method': '' }).kind).toBe('allowed');
  });

  it.each([
    ['the same origin with a trailing slash', 'https://app.example.com/', APP],
    ['upper-case scheme and host', 'HTTPS://APP.EXAMPLE.COM', APP],
    ['an explicit default port', 'https://app.example.com:443', APP],
    ['a configured entry written with a trailing slash', 'http://localhost:5173', 'http://localhost:5173'],
    ['a configured entry written in upper case with its default port', 'https://admin.example.com', 'https://admin.example.com'],
  ])('matches %s, echoing the normalized origin', (_, origin, echoed) => {
    const decision = policy.check('GET', { origin });
    expect(decision.kind).toBe('allowed');
    expect(decision.headers['access-control-allow-origin']).toBe(echoed);
  });

  it('finds the Origin header in any casing', () => {
    expect(policy.check('GET', { Origin: APP }).kind).toBe('allowed');
  });
});

describe('CORS: blocked origins', () => {
  it.each([
    ['an unlisted origin', 'https://evil.example'],
    ['a subdomain of a listed origin', 'https://x.app.example.com'],
    ['a listed host under another scheme', 'http://app.example.com'],
    ['a listed host on another port', 'https://app.example.com:8443'],
    ['localhost on another port', 'http://localhost:5174'],
    ['a suffix trick', 'https://app.example.com.evil.example'],
    ['a prefix trick', 'https://evilapp.example.com'],
    ['the opaque origin null', 'null'],
    ['an empty Origin', ''],
    ['an origin with a path', 'https://app.example.com/path'],
    ['an origin with a query', 'https://app.example.com?x=1'],
    ['an origin with credentials', 'https://user@app.example.com'],
    ['a backslash trick', 'https://evil.example\\@app.example.com'],
    ['another scheme', 'file://app.example.com'],
    ['garbage', 'not an origin'],
    ['*', '*'],
  ])('%s is blocked, with the origin as sent', (_, origin) => {
    expect(policy.check('GET', { origin })).toEqual({ kind: 'blocked', origin, headers: { vary: 'Origin' } });
  });

  it('a preflight from an unlisted origin is blocked too', () => {
    expect(preflight('https://evil.example', { 'access-control-request-headers': 'authorization' })).toEqual({
      kind: 'blocked',
      origin: 'https://evil.example',
      headers: { vary: 'Origin' },
    });
  });

  it('a repeated Origin header is blocked', () => {
    expect(policy.check('GET', { origin: [APP, APP] })).toEqual({ kind: 'blocked', origin: `${APP}, ${APP}`, headers: { vary: 'Origin' } });
  });

  it('an empty list blocks every origin', () => {
    expect(createCorsPolicy([]).check('GET', { origin: APP }).kind).toBe('blocked');
    expect(createCorsPolicy([]).check('GET', {}).kind).toBe('no-origin');
  });
});

describe('CORS: preflights from allowed origins', () => {
  it('answers with methods, headers, max-age and the echoed origin, and no credentials', () => {
    expect(preflight(APP)).toEqual({
      kind: 'preflight',
      headers: {
        'access-control-allow-origin': APP,
        'access-control-allow-methods': 'GET, POST, PUT, PATCH, DELETE, OPTIONS',
        'access-control-allow-headers': ALL_ALLOWED_HEADERS,
        'access-control-max-age': '600',
        vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
      },
    });
  });

  it('echoes the requested headers that are allowed, in their canonical spelling', () => {
    const decision = preflight(APP, { 'access-control-request-headers': 'content-type,authorization , IF-MATCH,idempotency-key,x-request-id' });
    expect(decision.headers['access-control-allow-headers']).toBe('Content-Type, Authorization, If-Match, Idempotency-Key, X-Request-Id');
  });

  it('leaves out requested headers that are not on the list', () => {
    const decision = preflight(APP, { 'access-control-request-headers': 'authorization, x-api-key, cookie, x-forwarded-for' });
    expect(decision.headers['access-control-allow-headers']).toBe('Authorization');
  });

  it('lists every allowed header when none of the requested ones is allowed, or none is requested', () => {
    expect(preflight(APP, { 'access-control-request-headers': 'x-custom' }).headers['access-control-allow-headers']).toBe(ALL_ALLOWED_HEADERS);
    expect(preflight(APP, { 'access-control-request-headers': ' , ' }).headers['access-control-allow-headers']).toBe(ALL_ALLOWED_HEADERS);
  });

  it('reads repeated request-headers lines and drops duplicates', () => {
    const decision = policy.check('OPTIONS', {
      origin: APP,
      'access-control-request-method': 'POST',
      'access-control-request-headers': ['authorization', 'content-type, Authorization'],
    });
    expect(decision.headers['access-control-allow-headers']).toBe('Authorization, Content-Type');
  });

  it('answers the same fixed method list whatever method is requested (the browser enforces it)', () => {
    const decision = policy.check('options', { origin: APP, 'access-control-request-method': 'PUT' });
    expect(decision.kind).toBe('preflight');
    expect(decision.headers['access-control-allow-methods']).toBe('GET, POST, PUT, PATCH, DELETE, OPTIONS');
  });

  it('never sets Access-Control-Allow-Credentials or *', () => {
    const { headers } = preflight(APP);
    expect(headers).not.toHaveProperty('access-control-allow-credentials');
    expect(Object.values(headers)).not.toContain('*');
  });
});

describe('CORS: configuration', () => {
  it.each(['*', 'null', '', 'app.example.com', 'https://app.example.com/path', 'ftp://app.example.com', 'https://'])(
    'refuses the entry %j',
    (entry) => {
      expect(() => createCorsPolicy([entry])).toThrow(/is not an allowed-origin entry/);
    },
  );

  it('trims entries', () => {
    expect(createCorsPolicy([`  ${APP}  `]).check('GET', { origin: APP }).kind).toBe('allowed');
  });
});

describe('normalizeOrigin', () => {
  it.each([
    ['https://App.Example.COM/', 'https://app.example.com'],
    ['http://localhost:80', 'http://localhost'],
    ['http://127.0.0.1:3000', 'http://127.0.0.1:3000'],
    ['http://[::1]:3000', 'http://[::1]:3000'],
    ['https://bücher.example', 'https://xn--bcher-kva.example'],
  ])('%s → %s', (text, origin) => {
    expect(normalizeOrigin(text)).toBe(origin);
  });

  it.each(['null', 'https://a.example//', 'https://a.example#x', ' https://a.example', 'https://a.example/ '])('refuses %j', (text) => {
    expect(normalizeOrigin(text)).toBeUndefined();
  });
});
