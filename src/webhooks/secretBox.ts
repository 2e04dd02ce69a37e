import { createCipheriv, createDecipheriv, hkdfSync, randomBytes as cryptoRandomBytes } from 'node:crypto';
import path from 'node:path';
import type { Config } from '../config.js';
import { loadOrCreateSecret } from '../auth/serverSecrets.js';

/**
 * Encryption at rest for webhook signing secrets: AES-256-GCM (node:crypto) under a key derived
 * with HKDF-SHA256 from the configured key material (WEBHOOK_SECRET_KEY, or the key file generated
 * into the data directory). Each sealed value is `v1.<iv>.<ciphertext>.<tag>` (base64url, 12-byte
 * random IV, 16-byte tag) and is bound to a context, the subscription id, as additional
 * authenticated data: a sealed secret copied onto another row does not open.
 */
export interface SecretBox {
  seal(plaintext: string, context: string): string;
  /** Throws when the value was not sealed with this key and context, or was altered. */
  open(sealed: string, context: string): string;
}

const FORMAT = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_INFO = 'contract-api-server webhook signing secrets v1';

export function createSecretBox(keyMaterial: Uint8Array, randomBytes: (size: number) => Uint8Array = cryptoRandomBytes): SecretBox {
  if (keyMaterial.length < 32) throw new RangeError('the webhook secret key must be at least 32 bytes');
  const key = Buffer.from(hkdfSync('sha256', keyMaterial, new Uint8Array(0), KEY_INFO, 32));
  return {
    seal(plaintext, context) {
      const iv = Buffer.from(randomBytes(IV_BYTES));
      const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [FORMAT, iv.toString('base64url'), ciphertext.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
    },
    open(sealed, context) {
      const [format, ivText, ciphertextText, tagText, ...rest] = sealed.split('.');
      if (format !== FORMAT || tagText === undefined || rest.length > 0) throw new Error('not a sealed webhook secret');
      const [iv, ciphertext, tag] = [ivText!, ciphertextText!, tagText].map((part) => Buffer.from(part, 'base64url')) as [Buffer, Buffer, Buffer];
      if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new Error('not a sealed webhook secret');
      const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(tag);
      try {
        return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
      } catch {
        throw new Error('a sealed webhook secret did not open: wrong WEBHOOK_SECRET_KEY, or the value was altered');
      }
    },
  };
}

/** The deployment's secret box: WEBHOOK_SECRET_KEY, or the key generated (0600) into the data directory on first start. */
export function loadWebhookSecretBox(config: Pick<Config, 'webhookSecretKey' | 'dataDirectory'>): SecretBox {
  const keyMaterial = loadOrCreateSecret(config.webhookSecretKey, path.join(config.dataDirectory, 'webhook-secrets.key'), {
    name: 'WEBHOOK_SECRET_KEY',
  });
  return createSecretBox(keyMaterial);
}
