// Portfolio API keys: `pfk_` and 32 random bytes (see secretTokens.ts).
import type { RandomBytes } from '../store/ids.js';
import { displayPrefixLength, mintSecret, secretPattern, sha256Hex } from './secretTokens.js';

export const apiKeyPattern = secretPattern('pfk_');
/** How many leading characters of a key are stored for display. */
export const apiKeyPrefixLength = displayPrefixLength;

/** Lowercase hex SHA-256 of the whole key: what is stored, and what a request's key is looked up by. */
export const hashApiKey = sha256Hex;

/** A new key with what the store keeps of it. */
export interface MintedApiKey {
  key: string;
  keyHash: string;
  keyPrefix: string;
}

export function mintApiKey(randomBytes?: RandomBytes): MintedApiKey {
  const { value, hash, displayPrefix } = mintSecret('pfk_', randomBytes);
  return { key: value, keyHash: hash, keyPrefix: displayPrefix };
}
