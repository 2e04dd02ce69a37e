// The secrets the server keeps in its data directory when the environment gives none: the
// session-token key, the cursor key and the webhook secrets key.
import { randomBytes as cryptoRandomBytes } from 'node:crypto';
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

function decodeSecret(text: string, origin: string): Uint8Array {
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
  if (existsSync(filePath)) return decodeSecret(readFileSync(filePath, 'utf8'), `${name} in ${filePath}`);

  const randomBytes = options.randomBytes ?? ((size: number) => cryptoRandomBytes(size));
  const encoded = Buffer.from(randomBytes(secretByteLength)).toString('base64url');
  mkdirSync(dirname(filePath), { recursive: true });
  const temporary = `${filePath}.${process.pid}.${Buffer.from(cryptoRandomBytes(6)).toString('hex')}.tmp`;
  writeFileSync(temporary, `${encoded}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(temporary, filePath); // fails with EEXIST when another process was first
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return decodeSecret(readFileSync(filePath, 'utf8'), `${name} in ${filePath}`);
  } finally {
    unlinkSync(temporary);
  }
  return decodeSecret(encoded, name);
}
