// Personal access tokens: `svc_pat_` and 32 random bytes (see secretTokens.ts).
import type { RandomBytes } from '../store/ids.js';
import { displayPrefixLength, mintSecret, secretPattern, sha256Hex } from './secretTokens.js';

export const personalAccessTokenPattern = secretPattern('svc_pat_');
/** How many leading characters of a token are stored for display (`svc_pat_` and 4 more). */
export const personalAccessTokenPrefixLength = displayPrefixLength;

/** Lowercase hex SHA-256 of the whole token: what is stored, and what a request's token is looked up by. */
export const hashPersonalAccessToken = sha256Hex;

/** A new token with what the store keeps of it. */
export interface MintedPersonalAccessToken {
  token: string;
  tokenHash: string;
  tokenPrefix: string;
}

export function mintPersonalAccessToken(randomBytes?: RandomBytes): MintedPersonalAccessToken {
  const { value, hash, displayPrefix } = mintSecret('svc_pat_', randomBytes);
  return { token: value, tokenHash: hash, tokenPrefix: displayPrefix };
}
