import { createCipheriv, createDecipheriv, hkdfSync } from 'node:crypto';
import type { Config } from '../config.js';
import { defaultRandomBytes, type RandomBytes } from '../store/ids.js';
import { fixedKeyRing, keyFilePath, legacyKeyId, loadKeyRing, type KeyRing, type RingKey } from './keyRings.js';

/**
 * Encryption at rest for webhook signing secrets, connector credentials and stored idempotent
 * answers: AES-256-GCM (node:crypto) under a key derived with HKDF-SHA256 from one key of the
 * sealing key ring (WEBHOOK_SECRET_KEY, or the key file in the data directory; see
 * src/auth/keyRings.ts). Each sealed value is `v2.<key id>.<iv>.<ciphertext>.<tag>` (base64url,
 * 12-byte random IV, 16-byte tag), sealed with the newest key, and is bound to a context (the
 * record id) as additional authenticated data: a sealed value copied onto another row does not
 * open. Values sealed before key ids existed (`v1.<iv>.<ciphertext>.<tag>`) open with key k0.
 */
export interface SecretBox {
  seal(plaintext: string, context: string): string;
  /** Throws when the value was not sealed with a configured key and this context, or was altered. */
  open(sealed: string, context: string): string;
}

const FORMAT = 'v2';
const LEGACY_FORMAT = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
// Kept as it was when only webhook secrets were sealed: the keys derive from it, so another text would open nothing stored.
const KEY_INFO = 'contract-api-server webhook signing secrets v1';

/** The id of the key a value was sealed with (k0 for the format without ids); undefined when it is no sealed value. */
export function sealedKeyId(sealed: string): string | undefined {
  const parts = sealed.split('.');
  if (parts[0] === FORMAT && parts.length === 5) return parts[1];
  if (parts[0] === LEGACY_FORMAT && parts.length === 4) return legacyKeyId;
  return undefined;
}

export function createSecretBox(keys: Uint8Array | KeyRing, randomBytes: RandomBytes = defaultRandomBytes): SecretBox {
  const ring = keys instanceof Uint8Array ? fixedKeyRing(keys) : keys;
  const derived = new WeakMap<RingKey, Buffer>();
  const aesKey = (key: RingKey) => {
    let found = derived.get(key);
    if (!found) {
      if (key.key.length < 32) throw new RangeError('the webhook secret key must be at least 32 bytes');
      found = Buffer.from(hkdfSync('sha256', key.key, new Uint8Array(0), KEY_INFO, 32));
      derived.set(key, found);
    }
    return found;
  };
  aesKey(ring.newest());
  return {
    seal(plaintext, context) {
      const key = ring.newest();
      const iv = Buffer.from(randomBytes(IV_BYTES));
      const cipher = createCipheriv('aes-256-gcm', aesKey(key), iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [FORMAT, key.id, iv.toString('base64url'), ciphertext.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
    },
    open(sealed, context) {
      const keyId = sealedKeyId(sealed);
      if (keyId === undefined) throw new Error('not a sealed webhook secret');
      const [ivText, ciphertextText, tagText] = sealed.split('.').slice(sealed.startsWith(`${FORMAT}.`) ? 2 : 1);
      const [iv, ciphertext, tag] = [ivText!, ciphertextText!, tagText!].map((part) => Buffer.from(part, 'base64url')) as [Buffer, Buffer, Buffer];
      if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new Error('not a sealed webhook secret');
      const key = ring.find(keyId);
      if (!key) throw new Error(`a sealed webhook secret did not open: it was sealed with key ${keyId}, which WEBHOOK_SECRET_KEY no longer lists`);
      const decipher = createDecipheriv('aes-256-gcm', aesKey(key), iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(tag);
      try {
        return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
      } catch {
        throw new Error(`a sealed webhook secret did not open with key ${keyId}: wrong WEBHOOK_SECRET_KEY, or the value was altered`);
      }
    },
  };
}

/** The deployment's sealing key ring: WEBHOOK_SECRET_KEY, or the key file (0600) in the data directory, generated on first start. */
export function loadSealingKeyRing(config: Pick<Config, 'webhookSecretKey' | 'dataDirectory'>): KeyRing {
  return loadKeyRing(config.webhookSecretKey, keyFilePath('sealing', config.dataDirectory), { name: 'WEBHOOK_SECRET_KEY' });
}

/** The deployment's secret box over its sealing key ring. */
export function loadSealingBox(config: Pick<Config, 'webhookSecretKey' | 'dataDirectory'>): SecretBox {
  return createSecretBox(loadSealingKeyRing(config));
}
