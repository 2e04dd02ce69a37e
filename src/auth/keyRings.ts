// The server's rotatable keys: the webhook secrets key (sealing), the session-token key, the
// cursor key and the OAuth cookie key (the OAuth signing key, a JWK set, is in
// src/auth/oauth/signingKeys.ts). Each is a list of keys with ids, newest last, kept in a key file of the data
// directory or given in the environment variable:
//
//   k0 <base64url key>                              ← a key without an id (every file written before ids) is k0
//   k1 <base64url key> 2026-11-27T18:00:00.000Z     ← added later; the time it was added starts the previous key's grace
//
// Entries are separated by newlines or commas; `#` starts a comment line. New values are signed
// or sealed with the newest key; every listed key opens or verifies (session, cursor and OAuth cookie keys only
// for PREVIOUS_KEY_GRACE_SECONDS after the key that replaced them was added). A file is read again
// when it changes (looked at at most once a second, and at once when a value names a key id not
// known yet or a cursor matches no known key), so `admin keys rotate` reaches running processes without a restart.
import { renameSync, statSync, writeFileSync, readFileSync } from 'node:fs';
import { randomBytes as cryptoRandomBytes } from 'node:crypto';
import path from 'node:path';
import { decodeSecret, generateSecret, readOrCreateFile } from './serverSecrets.js';
import type { RandomBytes } from '../store/ids.js';

export interface RingKey {
  id: string;
  key: Uint8Array;
  /** When the key was added (epoch ms); unknown for a key without one, such as the first. */
  addedAt: number | undefined;
}

export interface KeyRing {
  /** The key new values are signed or sealed with: the last listed. */
  newest(): RingKey;
  /** Every listed key, oldest first. */
  keys(): readonly RingKey[];
  /** The key with this id; an unknown id makes a file-backed ring look at its file again first. */
  find(id: string): RingKey | undefined;
  /** Makes a file-backed ring look at its file now (a value signed with none of the known keys may be a new key's). */
  refresh(): void;
  /** Whether `key` still verifies at `now`: the newest always, a replaced one until `graceMs` after its successor was added. */
  accepts(key: RingKey, now: number, graceMs: number): boolean;
}

/** The id of a key given without one, and of the key that opens values sealed before key ids existed. */
export const legacyKeyId = 'k0';
const keyIdPattern = /^[A-Za-z0-9_-]{1,32}$/;
/** How often a file-backed ring looks whether its file changed. */
const FILE_CHECK_INTERVAL_MS = 1_000;

export type RotatableKeyName = 'sealing' | 'session' | 'cursor' | 'oauth-cookies';

/** Where each rotatable key is configured: its environment variable, else its file in the data directory. */
export const rotatableKeys: Record<RotatableKeyName, { variable: string; fileName: string; description: string }> = {
  sealing: { variable: 'WEBHOOK_SECRET_KEY', fileName: 'webhook-secrets.key', description: 'seals webhook signing secrets, connector credentials and stored idempotent answers' },
  session: { variable: 'SESSION_JWT_SECRET', fileName: 'session-jwt.key', description: 'signs session tokens (HS256)' },
  cursor: { variable: 'CURSOR_SECRET', fileName: 'cursor.key', description: 'signs list cursors (HMAC-SHA256)' },
  'oauth-cookies': { variable: 'OAUTH_COOKIE_SECRET', fileName: 'oauth-cookies.key', description: "signs the OAuth authorization server's cookies and its consent page's CSRF tokens" },
};
export const rotatableKeyNames = Object.keys(rotatableKeys) as RotatableKeyName[];

export function keyFilePath(name: RotatableKeyName, dataDirectory: string): string {
  return path.join(dataDirectory, rotatableKeys[name].fileName);
}

/** Parses a key list (see the top of this file); throws with `origin` named when it is malformed. */
export function parseKeyList(text: string, origin: string): RingKey[] {
  const entries = text
    .split(/[\n,]/)
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '' && !entry.startsWith('#'));
  if (entries.length === 0) throw new Error(`${origin} holds no key.`);
  const keys: RingKey[] = [];
  entries.forEach((entry, index) => {
    const fields = entry.split(/\s+/);
    if (fields.length === 1) {
      if (index !== 0) throw new Error(`${origin}: only the first key may be given without an id (entry ${index + 1}).`);
      keys.push({ id: legacyKeyId, key: decodeSecret(fields[0]!, origin), addedAt: undefined });
      return;
    }
    const [id, material, added, ...rest] = fields as [string, string, string | undefined, ...string[]];
    if (!keyIdPattern.test(id)) throw new Error(`${origin}: key id "${id}" must be 1 to 32 letters, digits, - or _.`);
    const addedAt = added === undefined ? undefined : Date.parse(added);
    if (rest.length > 0 || Number.isNaN(addedAt)) throw new Error(`${origin}: entry ${index + 1} must be "<id> <key> [<ISO 8601 time added>]".`);
    if (keys.some((key) => key.id === id)) throw new Error(`${origin}: key id "${id}" is listed twice.`);
    keys.push({ id, key: decodeSecret(material, `${origin} (key ${id})`), addedAt });
  });
  return keys;
}

/** A key list as a key file holds it: one line per key, oldest first. */
export function formatKeyList(keys: readonly RingKey[]): string {
  return keys.map((key) => [key.id, Buffer.from(key.key).toString('base64url'), ...(key.addedAt === undefined ? [] : [new Date(key.addedAt).toISOString()])].join(' ')).join('\n');
}

function ringOver(current: () => readonly RingKey[], reload: () => void): KeyRing {
  return {
    newest: () => current().at(-1)!,
    keys: current,
    find(id) {
      const found = current().find((key) => key.id === id);
      if (found) return found;
      reload();
      return current().find((key) => key.id === id);
    },
    refresh: reload,
    accepts(key, now, graceMs) {
      const keys = current();
      const index = keys.findIndex((candidate) => candidate.id === key.id);
      if (index === -1) return false;
      const successor = keys[index + 1];
      if (!successor) return true;
      // A key listed without its time (written by hand) is accepted until it is removed.
      return successor.addedAt === undefined || now < successor.addedAt + graceMs;
    },
  };
}

/** A ring of fixed keys (tests, and keys given in the environment). */
export function fixedKeyRing(keys: readonly RingKey[] | Uint8Array): KeyRing {
  const list: readonly RingKey[] = keys instanceof Uint8Array ? [{ id: legacyKeyId, key: keys, addedAt: undefined }] : [...keys];
  if (list.length === 0) throw new Error('a key ring needs at least one key');
  return ringOver(
    () => list,
    () => undefined,
  );
}

export interface LoadKeyRingOptions {
  /** What to call the key in messages: its environment variable. */
  name: string;
  randomBytes?: RandomBytes;
  /** The clock that spaces the file checks (performance.now by default: a wall clock set back would stop them). */
  monotonicNow?: () => number;
}

/**
 * The keys from `envValue` when set (fixed for the life of the process); otherwise from
 * `filePath`, created on first use with one random key (mode 0600, the format every earlier
 * version wrote) and read again whenever it changes. A file that changes into something
 * unreadable keeps the keys read before, so that a half-edited file never stops the server.
 */
export function loadKeyRing(envValue: string | undefined, filePath: string, options: LoadKeyRingOptions): KeyRing {
  if (envValue !== undefined && envValue.trim() !== '') return fixedKeyRing(parseKeyList(envValue, options.name));
  const { text } = readOrCreateFile(filePath, () => generateSecret(options.randomBytes));
  const file = watchKeyFile(filePath, text, (content) => parseKeyList(content, `${options.name} in ${filePath}`), options.monotonicNow);
  return ringOver(file.current, file.refresh);
}

export interface WatchedKeyFile<T> {
  /** What the file held when last looked at (looked at again when a second has passed). */
  current(): T;
  /** Looks at the file now. */
  refresh(): void;
}

/**
 * A key file parsed from `text` (its content now) and parsed again whenever it changes. A file
 * that changes into something unreadable keeps what was read before, so that a half-edited file
 * never stops the server.
 */
export function watchKeyFile<T>(filePath: string, text: string, parse: (text: string) => T, monotonicNow: () => number = () => performance.now()): WatchedKeyFile<T> {
  let value = parse(text);
  let seen = fileIdentity(filePath);
  let checkedAt = monotonicNow();
  const refresh = () => {
    checkedAt = monotonicNow();
    const identity = fileIdentity(filePath);
    if (identity === seen) return;
    seen = identity;
    try {
      value = parse(readFileSync(filePath, 'utf8'));
    } catch {
      // Kept: what was read before (see above).
    }
  };
  return {
    current() {
      if (monotonicNow() - checkedAt >= FILE_CHECK_INTERVAL_MS) refresh();
      return value;
    },
    refresh,
  };
}

/** The keys of a ring that verify at `now`, newest first. */
export function acceptedKeys(ring: KeyRing, now: number, graceMs: number): RingKey[] {
  return ring
    .keys()
    .filter((key) => ring.accepts(key, now, graceMs))
    .reverse();
}

function fileIdentity(filePath: string): string {
  try {
    const stats = statSync(filePath, { bigint: true });
    return `${stats.ino}:${stats.size}:${stats.mtimeNs}`;
  } catch {
    return 'missing';
  }
}

/** The next free id `k<n>`. */
export function nextKeyId(keys: readonly RingKey[]): string {
  const numbers = keys.map((key) => /^k(\d+)$/.exec(key.id)?.[1]).filter((digits) => digits !== undefined).map(Number);
  return `k${Math.max(-1, ...numbers) + 1}`;
}

/** A new key to add as the newest. */
export function newRingKey(keys: readonly RingKey[], now: number, randomBytes: RandomBytes = (size) => cryptoRandomBytes(size)): RingKey {
  return { id: nextKeyId(keys), key: new Uint8Array(randomBytes(32)), addedAt: now };
}

/** Replaces a key file's keys in one step: a reader sees the old list or the new one. */
export function writeKeyFile(filePath: string, keys: readonly RingKey[]): void {
  replaceKeyFile(filePath, formatKeyList(keys));
}

/** Replaces a key file's text in one step (a new file, mode 0600, renamed over it). */
export function replaceKeyFile(filePath: string, text: string): void {
  const temporary = `${filePath}.${process.pid}.${cryptoRandomBytes(6).toString('hex')}.tmp`;
  writeFileSync(temporary, `${text}\n`, { mode: 0o600, flag: 'wx' });
  renameSync(temporary, filePath);
}
