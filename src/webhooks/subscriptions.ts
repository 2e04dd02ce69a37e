import { maxLengths } from '../../generated/work-platform/rules.js';
import type { StoreSource } from '../store/engine.js';
import { defaultRandomBytes, newId, type RandomBytes } from '../store/ids.js';
import {
  createWebhookSubscriptionStore,
  type UpdateWebhookInput,
  type Webhook,
  type WebhookKeyRotation,
  type WebhookSubscriptionStore,
} from '../store/webhookSubscriptions.js';
import { ValueRefusedError } from '../store/workPlatformErrors.js';
import { checkText } from '../store/workPlatformValues.js';
import type { SecretBox } from './secretBox.js';
import { sealedNewSigningSecret } from './signingSecrets.js';
import { checkTargetUrl } from './targetGuard.js';

/**
 * Webhook subscriptions as the operations see them: the store's, with the webhook rules applied
 * before anything is stored. A URL must pass the target guard (public HTTPS only) and is stored as
 * the WHATWG parser normalizes it; a signing secret is made and sealed here, and leaves this
 * module in plaintext exactly twice: in the answer to creation and to a rotation.
 */

/** How long the secret a rotation replaces keeps signing: 58 hours 45 minutes. */
export const signingKeyOverlapMs = (58 * 60 + 45) * 60 * 1000;
/** The longest `url` the contract accepts. */
export const webhookUrlMaxLength = maxLengths.WebhookCreate.url;

export interface CreateWebhookInput {
  url: string;
  eventTypes: readonly string[];
  description?: string | null;
}

export interface WebhookSubscriptionsOptions {
  /** Seals signing secrets; the context is the subscription id. */
  secretBox: SecretBox;
  /** Admit loopback targets (WEBHOOK_ALLOW_LOOPBACK), for local development and tests. */
  allowLoopback?: boolean;
  now?: () => number;
  /** Source of ids; signing secrets always come from node:crypto. */
  randomBytes?: RandomBytes;
}

export interface WebhookSubscriptions extends Omit<WebhookSubscriptionStore, 'createWebhook' | 'updateWebhook' | 'rotateWebhookKey'> {
  /**
   * Creates an ACTIVE subscription with a new signing secret, returned only here. `id` is for
   * the demo data set, whose subscription has a fixed id.
   */
  createWebhook(workspaceId: string, input: CreateWebhookInput, options?: { id?: string }): Promise<{ webhook: Webhook; secret: string }>;
  /** The store's update, with a new `url` accepted by the target guard first. */
  updateWebhook(workspaceId: string, id: string, patch: UpdateWebhookInput, expectedVersion: number): Promise<Webhook>;
  /** A new current secret; the replaced one signs until the returned expiry, an older one is dropped. */
  rotateWebhookKey(workspaceId: string, id: string): Promise<WebhookKeyRotation>;
}

// RFC 3986 characters. The WHATWG parser leaves a few others (`|`, `^`) unencoded; a URL holding
// them would not be the `format: uri` the contract promises when it is read back.
const URI_CHARACTERS = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]+$/;

/**
 * The URL as stored: checked by the target guard (public HTTPS only) and normalized by the
 * WHATWG parser (lowercase host, punycode, `/` for an empty path), or every reason it is refused.
 */
function acceptedUrl(url: string, allowLoopback: boolean): string {
  checkText('url', url, webhookUrlMaxLength, { allowEmpty: false });
  const check = checkTargetUrl(url, { allowLoopback });
  if (!check.ok) {
    throw new ValueRefusedError([
      { path: '/url', code: 'invalid_format', message: `is refused: ${check.reasons.map((reason) => reason.message).join('; ')}` },
    ]);
  }
  const normalized = check.url.href;
  if (!URI_CHARACTERS.test(normalized) || normalized.length > webhookUrlMaxLength) {
    throw new ValueRefusedError([
      { path: '/url', code: 'invalid_format', message: 'is refused: percent-encode the characters a URI may not hold (such as | and ^)' },
    ]);
  }
  return normalized;
}

export function createWebhookSubscriptions(source: StoreSource, options: WebhookSubscriptionsOptions): WebhookSubscriptions {
  const now = options.now ?? Date.now;
  const randomBytes = options.randomBytes ?? defaultRandomBytes;
  const allowLoopback = options.allowLoopback ?? false;
  const box = options.secretBox;
  const store = createWebhookSubscriptionStore(source, { now, randomBytes });
  return {
    ...store,

    async createWebhook(workspaceId, input, createOptions = {}) {
      const url = acceptedUrl(input.url, allowLoopback);
      const id = createOptions.id ?? newId('whk', randomBytes);
      const { secret, sealedSecret } = sealedNewSigningSecret(box, id);
      const webhook = await store.createWebhook(workspaceId, { id, url, eventTypes: input.eventTypes, description: input.description, sealedSecret });
      return { webhook, secret };
    },

    async updateWebhook(workspaceId, id, patch, expectedVersion) {
      const accepted = patch.url === undefined ? patch : { ...patch, url: acceptedUrl(patch.url, allowLoopback) };
      return store.updateWebhook(workspaceId, id, accepted, expectedVersion);
    },

    async rotateWebhookKey(workspaceId, id) {
      const { secret, sealedSecret } = sealedNewSigningSecret(box, id);
      const rotation = await store.rotateWebhookKey(workspaceId, id, { sealedSecret, previousSecretExpiresAt: now() + signingKeyOverlapMs });
      return { id: rotation.id, signingKeyVersion: rotation.signingKeyVersion, secret, previousSigningKeyExpiresAt: rotation.previousSigningKeyExpiresAt };
    },
  };
}
