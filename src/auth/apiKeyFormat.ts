// Portfolio API keys: `pfk_` and 32 random bytes. The key itself is shown once; the store keeps
// its SHA-256 hash (what a request's key is looked up by) and a short prefix for display.
import { hash } from 'node:crypto';
import { defaultRandomBytes, type RandomBytes } from '../store/ids.js';

/** `pfk_` followed by 32 random bytes in URL-safe base64 without padding (43 characters). */
export const apiKeyPattern = /^pfk_[A-Za-z0-9_-]{43}$/;
/** How many leading characters of a key are stored for display. */
export const apiKeyPrefixLength = 12;

/** Lowercase hex SHA-256 of the whole key: what is stored, and what a request's key is looked up by. */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** A new key with what the store keeps of it. */
export interface MintedApiKey {
  key: string;
  keyHash: string;
  keyPrefix: string;
}

export function mintApiKey(randomBytes: RandomBytes = defaultRandomBytes): MintedApiKey {
  const key = `pfk_${Buffer.from(randomBytes(32)).toString('base64url')}`;
  return { key, keyHash: hashApiKey(key), keyPrefix: key.slice(0, apiKeyPrefixLength) };
}
