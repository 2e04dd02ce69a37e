// The formats of what the authorization server hands out: client secrets (`svc_ocs_…`, shown once,
// stored as a hash), and the opaque tokens, codes and session ids oidc-provider mints, which are
// stored only as their SHA-256 too.
import { hash, timingSafeEqual } from 'node:crypto';
import { defaultRandomBytes, type RandomBytes } from '../../store/ids.js';

/** `svc_ocs_` followed by 32 random bytes in URL-safe base64 without padding. */
export const clientSecretPattern = /^svc_ocs_[A-Za-z0-9_-]{43}$/;

/**
 * An OAuth access token as oidc-provider mints it: 256 random bits in 43 URL-safe base64
 * characters, no prefix and no dots, so it cannot be taken for a PAT (`svc_pat_…`) or a session JWT.
 */
export const oauthAccessTokenPattern = /^[A-Za-z0-9_-]{43}$/;

/** Lowercase hex SHA-256: how a client secret, and the id of every stored token, code or session, is kept. */
export function oauthSecretHash(value: string): string {
  return hash('sha256', value, 'hex');
}

/** A new client secret and its hash; the secret itself is shown once and never stored. */
export function mintClientSecret(randomBytes: RandomBytes = defaultRandomBytes): { secret: string; secretHash: string } {
  const secret = `svc_ocs_${Buffer.from(randomBytes(32)).toString('base64url')}`;
  return { secret, secretHash: oauthSecretHash(secret) };
}

/** Whether a presented client secret is the one whose hash is stored, compared in constant time. */
export function clientSecretMatches(presented: unknown, storedHash: string | null | undefined): boolean {
  if (typeof presented !== 'string' || typeof storedHash !== 'string' || !clientSecretPattern.test(presented)) return false;
  const expected = Buffer.from(storedHash, 'hex');
  const actual = Buffer.from(oauthSecretHash(presented), 'hex');
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
