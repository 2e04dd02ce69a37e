// Personal access tokens: `svc_pat_` and 32 random bytes. The token itself is shown once; the
// store keeps its SHA-256 hash (what a request's token is looked up by) and a short prefix for display.
import { hash } from 'node:crypto';
import { defaultRandomBytes, type RandomBytes } from '../store/ids.js';

/** `svc_pat_` followed by 32 random bytes in URL-safe base64 without padding (43 characters). */
export const personalAccessTokenPattern = /^svc_pat_[A-Za-z0-9_-]{43}$/;
/** How many leading characters of a token are stored for display (`svc_pat_` and 4 more). */
export const personalAccessTokenPrefixLength = 12;

/** Lowercase hex SHA-256 of the whole token: what is stored, and what a request's token is looked up by. */
export function hashPersonalAccessToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** A new token with what the store keeps of it. */
export interface MintedPersonalAccessToken {
  token: string;
  tokenHash: string;
  tokenPrefix: string;
}

export function mintPersonalAccessToken(randomBytes: RandomBytes = defaultRandomBytes): MintedPersonalAccessToken {
  const token = `svc_pat_${Buffer.from(randomBytes(32)).toString('base64url')}`;
  return { token, tokenHash: hashPersonalAccessToken(token), tokenPrefix: token.slice(0, personalAccessTokenPrefixLength) };
}
