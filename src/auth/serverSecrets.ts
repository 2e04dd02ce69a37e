// The secrets the server keeps in its data directory when the environment gives none: the
// session-token key, the cursor key, the webhook secrets key, and the OAuth authorization
// server's cookie key and signing key.
import { createPrivateKey, generateKeyPairSync, randomBytes as cryptoRandomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { RandomBytes } from '../store/ids.js';

/** Length of a generated secret; a configured one must be at least this long. */
export const secretByteLength = 32;

export interface LoadSecretOptions {
  /** What to call the secret in error messages, e.g. the environment variable. */
  name?: string;
  randomBytes?: RandomBytes;
}

export function decodeSecret(text: string, origin: string): Uint8Array {
  const trimmed = text.trim();
  const bytes = /^[A-Za-z0-9_-]+$/.test(trimmed) ? Buffer.from(trimmed, 'base64url') : Buffer.alloc(0);
  if (bytes.length < secretByteLength) {
    throw new Error(`${origin} must be at least ${secretByteLength} bytes in URL-safe base64 without padding (43 or more characters).`);
  }
  return new Uint8Array(bytes);
}

/**
 * The secret from `envValue` (base64url) when set; otherwise the one kept in `filePath`, which is
 * created on first use with 32 random bytes and mode 0600 and reused on every later start. Used
 * for the session-token key and for the cursor key. Several processes starting at once end up
 * with the same secret: the file appears atomically, complete, or not at all.
 */
export function loadOrCreateSecret(envValue: string | undefined, filePath: string, options: LoadSecretOptions = {}): Uint8Array {
  const name = options.name ?? 'The secret';
  if (envValue !== undefined && envValue.trim() !== '') return decodeSecret(envValue, name);
  const { text, origin } = readOrCreateFile(filePath, () => generateSecret(options.randomBytes));
  return decodeSecret(text, origin === 'created' ? name : `${name} in ${filePath}`);
}

/** A new secret as the environment variables take it: 32 random bytes, URL-safe base64. */
export function generateSecret(randomBytes: RandomBytes = (size) => cryptoRandomBytes(size)): string {
  return Buffer.from(randomBytes(secretByteLength)).toString('base64url');
}

/** A new private EC P-256 JWK (ES256) as JSON, as OAUTH_SIGNING_JWK takes it. */
export function generateSigningJwk(now: () => number = Date.now): string {
  const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
  return JSON.stringify({ ...jwk, kid: `es256-${now().toString(36)}`, alg: 'ES256', use: 'sig' });
}

/**
 * The file's text; when it does not exist, it is created with `make()`, mode 0600. Several
 * processes starting at once end up with the same text: the file appears atomically, complete,
 * or not at all.
 */
export function readOrCreateFile(filePath: string, make: () => string): { text: string; origin: 'read' | 'created' } {
  if (existsSync(filePath)) return { text: readFileSync(filePath, 'utf8'), origin: 'read' };
  const text = make();
  mkdirSync(dirname(filePath), { recursive: true });
  const temporary = `${filePath}.${process.pid}.${Buffer.from(cryptoRandomBytes(6)).toString('hex')}.tmp`;
  writeFileSync(temporary, `${text}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(temporary, filePath); // fails with EEXIST when another process was first
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return { text: readFileSync(filePath, 'utf8'), origin: 'read' };
  } finally {
    unlinkSync(temporary);
  }
  return { text, origin: 'created' };
}

/**
 * The OAuth authorization server's signing key: a private EC P-256 JWK (ES256) from `envValue`
 * (the JWK as JSON) when set, else the one kept in `filePath`, generated on first use.
 */
export function loadOrCreateSigningJwk(envValue: string | undefined, filePath: string, options: { name?: string } = {}): Record<string, unknown> {
  const name = options.name ?? 'The signing key';
  if (envValue !== undefined && envValue.trim() !== '') return decodeSigningJwk(envValue, name);
  const { text } = readOrCreateFile(filePath, () => generateSigningJwk());
  return decodeSigningJwk(text, `${name} in ${filePath}`);
}

function decodeSigningJwk(text: string, origin: string): Record<string, unknown> {
  let jwk: Record<string, unknown>;
  try {
    jwk = JSON.parse(text) as Record<string, unknown>;
    if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || typeof jwk.d !== 'string') throw new Error('not a private P-256 key');
    createPrivateKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' });
  } catch {
    throw new Error(`${origin} must be a private EC P-256 JWK as JSON ({"kty":"EC","crv":"P-256","x":…,"y":…,"d":…}).`);
  }
  return { ...jwk, alg: 'ES256', use: 'sig', kid: typeof jwk.kid === 'string' ? jwk.kid : 'es256' };
}
