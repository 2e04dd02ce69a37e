// The secrets the server keeps in its data directory when the environment gives none: the
// session-token key, the cursor key, the webhook secrets key, and the OAuth authorization
// server's cookie key and signing key.
import { createECDH, randomBytes as cryptoRandomBytes } from 'node:crypto';
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

/** A new secret as the environment variables take it: 32 random bytes, URL-safe base64. */
export function generateSecret(randomBytes: RandomBytes = (size) => cryptoRandomBytes(size)): string {
  return Buffer.from(randomBytes(secretByteLength)).toString('base64url');
}

/** Bytes of a P-256 coordinate and private scalar in a JWK (RFC 7518, 6.2.1.2 and 6.2.2.1). */
const P256_BYTES = 32;

/**
 * A new private EC P-256 JWK (ES256) as JSON, as OAUTH_SIGNING_JWK takes it. Made with ECDH, not
 * `generateKeyPairSync('ec').privateKey.export({ format: 'jwk' })`: on Node 20 that export holds the
 * key's mutex while it allocates, a garbage collection then may finalize the spent generation job,
 * whose destructor waits for the same mutex, and the process hangs for good (a server's first start
 * hung so in CI: KeyGenJob::~KeyGenJob under ExportJWKEcKey, in gdb).
 */
export function generateSigningJwk(now: () => number = Date.now): string {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  const point = ecdh.getPublicKey(); // uncompressed: 0x04, x, y
  const privateScalar = Buffer.alloc(P256_BYTES);
  const scalar = ecdh.getPrivateKey(); // without its leading zero bytes
  scalar.copy(privateScalar, P256_BYTES - scalar.length);
  const jwk = {
    kty: 'EC',
    crv: 'P-256',
    x: point.subarray(1, 1 + P256_BYTES).toString('base64url'),
    y: point.subarray(1 + P256_BYTES).toString('base64url'),
    d: privateScalar.toString('base64url'),
  };
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
