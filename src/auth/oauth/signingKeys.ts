// The OAuth authorization server's signing keys: private EC P-256 JWKs (ES256), published at
// /oauth/jwks. OAUTH_SIGNING_JWK, or the file oauth-signing-key.json of the data directory, holds
// one JWK or a JWK set ({"keys": [...]}, oldest first); the newest signs. `admin keys rotate
// oauth-signing` appends a key and `admin keys retire oauth-signing <kid>` removes one; a running
// server notices a changed file within a second and publishes the new set.
import { createPrivateKey, type JsonWebKey } from 'node:crypto';
import { watchKeyFile } from '../keyRings.js';
import { generateSigningJwk, readOrCreateFile } from '../serverSecrets.js';

export type SigningJwk = Record<string, unknown> & { kid: string };

export interface SigningKeySet {
  /** Every key, oldest first; the last one signs. The same array until the keys change. */
  keys(): readonly SigningJwk[];
  /** Where the keys come from: the file, or undefined for the environment variable. */
  file: string | undefined;
}

export const signingKeyFileName = 'oauth-signing-key.json';
export const signingKeyVariable = 'OAUTH_SIGNING_JWK';

/** One JWK or a JWK set as JSON; throws naming `origin` when it is not private P-256 keys with distinct ids. */
export function parseSigningKeys(text: string, origin: string): SigningJwk[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${origin} must be a private EC P-256 JWK, or a JWK set {"keys": [...]}, as JSON.`);
  }
  const list = parsed && typeof parsed === 'object' && Array.isArray((parsed as { keys?: unknown }).keys) ? (parsed as { keys: unknown[] }).keys : [parsed];
  if (list.length === 0) throw new Error(`${origin} holds no key.`);
  const keys = list.map((entry, index) => decodeSigningJwk(entry, list.length === 1 ? origin : `${origin} (key ${index + 1})`));
  const ids = new Set(keys.map((key) => key.kid));
  if (ids.size !== keys.length) throw new Error(`${origin}: every key needs its own "kid".`);
  return keys;
}

/** The file's (or variable's) text for these keys: one JWK alone, a JWK set for more. */
export function formatSigningKeys(keys: readonly SigningJwk[]): string {
  return keys.length === 1 ? JSON.stringify(keys[0]) : JSON.stringify({ keys });
}

/** A new key, with an id no listed key has. */
export function newSigningKey(keys: readonly SigningJwk[], now: number): SigningJwk {
  let at = now;
  for (;;) {
    const key = JSON.parse(generateSigningJwk(() => at)) as SigningJwk;
    if (!keys.some((existing) => existing.kid === key.kid)) return key;
    at += 1;
  }
}

/**
 * The keys from `envValue` when set (fixed for the life of the process); otherwise from
 * `filePath`, created on first use with one new key (mode 0600) and read again when it changes.
 */
export function loadSigningKeys(envValue: string | undefined, filePath: string, options: { monotonicNow?: () => number } = {}): SigningKeySet {
  if (envValue !== undefined && envValue.trim() !== '') {
    const keys = parseSigningKeys(envValue, signingKeyVariable);
    return { keys: () => keys, file: undefined };
  }
  const { text } = readOrCreateFile(filePath, () => generateSigningJwk());
  const watched = watchKeyFile(filePath, text, (content) => parseSigningKeys(content, `${signingKeyVariable} in ${filePath}`), options.monotonicNow);
  return { keys: watched.current, file: filePath };
}

function decodeSigningJwk(value: unknown, origin: string): SigningJwk {
  const jwk = value as Record<string, unknown> | null;
  try {
    if (!jwk || typeof jwk !== 'object' || jwk.kty !== 'EC' || jwk.crv !== 'P-256' || typeof jwk.d !== 'string') throw new Error('not a private P-256 key');
    createPrivateKey({ key: jwk as JsonWebKey, format: 'jwk' });
  } catch {
    throw new Error(`${origin} must be a private EC P-256 JWK as JSON ({"kty":"EC","crv":"P-256","x":…,"y":…,"d":…}).`);
  }
  return { ...jwk, alg: 'ES256', use: 'sig', kid: typeof jwk.kid === 'string' ? jwk.kid : 'es256' };
}
