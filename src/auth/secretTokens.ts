// What API keys and personal access tokens share: a fixed prefix and 32 random bytes, shown once;
// the store keeps only the SHA-256 of the whole value (what a request's credential is looked up by)
// and its first characters for display.
import { hash } from 'node:crypto';
import { defaultRandomBytes, type RandomBytes } from '../store/ids.js';

/** How many leading characters of a key or token are stored for display. */
export const displayPrefixLength = 12;

/** Lowercase hex SHA-256 of the whole value. */
export function sha256Hex(value: string): string {
  return hash('sha256', value, 'hex');
}

/** `prefix` and 32 random bytes in URL-safe base64 without padding (43 characters). */
export function secretPattern(prefix: string): RegExp {
  return new RegExp(`^${prefix}[A-Za-z0-9_-]{43}$`);
}

/** A new secret value, its hash and its display prefix. */
export function mintSecret(prefix: string, randomBytes: RandomBytes = defaultRandomBytes): { value: string; hash: string; displayPrefix: string } {
  const value = `${prefix}${Buffer.from(randomBytes(32)).toString('base64url')}`;
  return { value, hash: sha256Hex(value), displayPrefix: value.slice(0, displayPrefixLength) };
}
