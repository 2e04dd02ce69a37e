// Session JWTs of the Work-Platform API.
//
// Tokens are compact JWS, HS256 only, claims {iss, sub, aud, wid, iat, exp}. Verification is
// jose's jwtVerify with the algorithm pinned to HS256, so 'none', RS/ES/HS512 and every other
// header trick are refused before the signature is even looked at. Issuing is done here with
// node:crypto because it must be synchronous (the demo data set signs its tokens inside a
// synchronous SQLite transaction) and jose only signs asynchronously; the tests prove that the
// bytes are exactly those jose's SignJWT produces for the same header and claims.
import { createHmac } from 'node:crypto';
import { fixedKeyRing, legacyKeyId, type KeyRing, type RingKey } from './keyRings.js';

/** jose is loaded by the first session token to verify: loading its 46 modules took about 80 ms of CPU at every start. */
let jose: Promise<typeof import('jose')> | undefined;

export const sessionTokenIssuer = 'contract-api-server';
export const sessionTokenAudience = 'work-platform';
/** Default lifetime of a session token: one hour. */
export const defaultSessionLifetimeSeconds = 60 * 60;
/** The longest lifetime a session token may have; a longer one is never issued, and refused when presented. */
export const maximumSessionLifetimeSeconds = 24 * 60 * 60;
/** How far in the future a token's `iat` may lie (the issuer's clock running ahead). */
export const sessionClockSkewSeconds = 60;

export interface SessionTokenInput {
  userId: string;
  workspaceId: string;
  /** Seconds from `now` to expiry; negative values mint a token that has already expired (for tests). */
  lifetimeSeconds: number;
  /** Milliseconds since the epoch: the clock of the issuer. */
  now: number;
}

export type SessionVerification =
  | { ok: true; userId: string; workspaceId: string; expiresAt: number; issuedAt: number }
  | { ok: false; reason: 'expired' | 'invalid' };

const encodeSegment = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
const legacyProtectedHeader = encodeSegment({ alg: 'HS256', typ: 'JWT' });
/** How long a replaced session key still verifies the tokens it signed, by default: the longest a session lives. */
export const defaultSessionKeyGraceMs = maximumSessionLifetimeSeconds * 1000;

/**
 * Signs a session token (HS256, iss/aud fixed, `wid` = workspace id, times in whole seconds). With
 * a key of a key ring the header names it (`kid`); a bare key signs without, as before key ids.
 */
export function issueSessionToken(signingKey: Uint8Array | RingKey, input: SessionTokenInput): string {
  const { userId, workspaceId, lifetimeSeconds, now } = input;
  if (!Number.isSafeInteger(lifetimeSeconds)) throw new TypeError('lifetimeSeconds must be a whole number of seconds.');
  if (lifetimeSeconds > maximumSessionLifetimeSeconds) {
    throw new RangeError(`A session token lives at most ${maximumSessionLifetimeSeconds / 3600} hours; mint a new one instead of a longer one.`);
  }
  const issuedAt = Math.floor(now / 1000);
  const claims = {
    iss: sessionTokenIssuer,
    sub: userId,
    aud: sessionTokenAudience,
    wid: workspaceId,
    iat: issuedAt,
    exp: issuedAt + lifetimeSeconds,
  };
  const [secret, header] =
    signingKey instanceof Uint8Array ? [signingKey, legacyProtectedHeader] : [signingKey.key, encodeSegment({ alg: 'HS256', typ: 'JWT', kid: signingKey.id })];
  const signingInput = `${header}.${encodeSegment(claims)}`;
  const signature = createHmac('sha256', secret).update(signingInput).digest('base64url');
  return `${signingInput}.${signature}`;
}

const userIdPattern = /^usr_[A-Za-z0-9]+$/;
const workspaceIdPattern = /^ten_[A-Za-z0-9]+$/;

function hasValidSubjects(payload: Record<string, unknown>): payload is { sub: string; wid: string; exp: number; iat: number } {
  return (
    typeof payload.sub === 'string' &&
    userIdPattern.test(payload.sub) &&
    typeof payload.wid === 'string' &&
    workspaceIdPattern.test(payload.wid) &&
    typeof payload.exp === 'number' &&
    typeof payload.iat === 'number' &&
    // No longer-lived token than this server would issue, and none issued in the future.
    payload.exp - payload.iat <= maximumSessionLifetimeSeconds
  );
}

/**
 * Verifies a session token at `now` (milliseconds) with the key its header names (`kid`; none:
 * k0), when the ring still accepts that key (a replaced key for `graceMs` after its successor was
 * added). `expired` only when the token is genuine and every claim but `exp` is valid; any other
 * failure is `invalid`. The caller still has to check that the user exists in that workspace.
 */
export async function verifySessionToken(
  keys: Uint8Array | KeyRing,
  token: string,
  now: number,
  graceMs: number = defaultSessionKeyGraceMs,
): Promise<SessionVerification> {
  const { errors: joseErrors, jwtVerify, decodeProtectedHeader } = await (jose ??= import('jose'));
  const ring = keys instanceof Uint8Array ? fixedKeyRing(keys) : keys;
  try {
    const { kid } = decodeProtectedHeader(token);
    const key = ring.find(typeof kid === 'string' ? kid : legacyKeyId);
    if (!key || !ring.accepts(key, now, graceMs)) return { ok: false, reason: 'invalid' };
    const secret = key.key;
    const { payload } = await jwtVerify(token, secret, {
      algorithms: ['HS256'],
      issuer: sessionTokenIssuer,
      audience: sessionTokenAudience,
      requiredClaims: ['sub', 'wid', 'iat', 'exp'],
      currentDate: new Date(now),
    });
    if (!hasValidSubjects(payload)) return { ok: false, reason: 'invalid' };
    if (payload.iat * 1000 > now + sessionClockSkewSeconds * 1000) return { ok: false, reason: 'invalid' };
    return { ok: true, userId: payload.sub, workspaceId: payload.wid, expiresAt: payload.exp * 1000, issuedAt: payload.iat * 1000 };
  } catch (error) {
    // jose checks the signature first and `exp` last, so JWTExpired means everything else held.
    if (error instanceof joseErrors.JWTExpired && error.claim === 'exp' && hasValidSubjects(error.payload)) {
      return { ok: false, reason: 'expired' };
    }
    return { ok: false, reason: 'invalid' };
  }
}

