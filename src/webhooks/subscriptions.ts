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
import type { SecretBox } from '../auth/secretBox.js';
import { sealedNewSigningSecret } from './signingSecrets.js';
import type { HostResolver } from './hostResolver.js';
import { checkTargetUrl, isHostName, resolveAndCheck } from './targetGuard.js';

/**
 * Webhook subscriptions as the operations see them: the store's, with the webhook rules applied
 * before anything is stored. A URL must pass the target guard (public HTTPS only), its host name
 * must not resolve to a non-public address (see {@link CREATE_RESOLUTION_TIMEOUT_MS}), and it is
 * stored as the WHATWG parser normalizes it; a signing secret is made and sealed here, and leaves this
 * module in plaintext exactly twice: in the answer to creation and to a rotation.
 */

/** How long the secret a rotation replaces keeps signing: 58 hours 45 minutes. */
export const signingKeyOverlapMs = (58 * 60 + 45) * 60 * 1000;
/**
 * How long creating or updating a subscription waits for its host name to resolve. A name that
 * has not answered by then is accepted, as one that does not resolve at all is (resolution fails
 * for many passing reasons): the address is checked again before every delivery, and a slow
 * resolver must not hold the request. The query goes on and its answer is cached for the worker.
 */
export const CREATE_RESOLUTION_TIMEOUT_MS = 2_000;
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
  /**
   * Resolves a URL's host name before it is accepted (the process's resolver, shared with the
   * worker); false resolves nothing (the demo data's fixed placeholder URLs, bench set-up).
   */
  resolver: HostResolver | false;
  now?: () => number;
  /** Source of ids; signing secrets always come from node:crypto. */
  randomBytes?: RandomBytes;
}

export interface WebhookSubscriptions extends Omit<WebhookSubscriptionStore, 'createWebhook' | 'updateWebhook' | 'rotateWebhookKey'> {
  /**
   * Creates an ACTIVE subscription with a new signing secret, returned only here. `createdBy` is the
   * user who asks; `id` is for the demo data set, whose subscription has a fixed id.
   */
  createWebhook(workspaceId: string, input: CreateWebhookInput, options?: { id?: string; createdBy?: string | null }): Promise<{ webhook: Webhook; secret: string }>;
  /** The store's update, with a new `url` accepted by the target guard first. */
  updateWebhook(workspaceId: string, id: string, patch: UpdateWebhookInput, expectedVersion: number): Promise<Webhook>;
  /** A new current secret; the replaced one signs until the returned expiry, an older one is dropped. */
  rotateWebhookKey(workspaceId: string, id: string): Promise<WebhookKeyRotation>;
}

// RFC 3986 characters. The WHATWG parser leaves a few others (`|`, `^`) unencoded; a URL holding
// them would not be the `format: uri` the contract promises when it is read back.
const URI_CHARACTERS = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]+$/;

/**
 * The URL as stored: checked by the target guard (public HTTPS only; a host name resolved and
 * refused when it resolves to a non-public address) and normalized by the WHATWG parser (lowercase
 * host, punycode, `/` for an empty path), or every reason it is refused.
 */
async function acceptedUrl(url: string, allowLoopback: boolean, resolver: HostResolver | false): Promise<string> {
  checkText('url', url, webhookUrlMaxLength, { allowEmpty: false });
  const check = checkTargetUrl(url, { allowLoopback });
  const refused = (reasons: string[]) =>
    new ValueRefusedError([{ path: '/url', code: 'invalid_format', message: `is refused: ${reasons.join('; ')}` }]);
  if (!check.ok) throw refused(check.reasons.map((reason) => reason.message));
  const normalized = check.url.href;
  if (!URI_CHARACTERS.test(normalized) || normalized.length > webhookUrlMaxLength) {
    throw new ValueRefusedError([
      { path: '/url', code: 'invalid_format', message: 'is refused: percent-encode the characters a URI may not hold (such as | and ^)' },
    ]);
  }
  if (resolver && isHostName(check.url.hostname)) {
    const resolved = await resolveAndCheck(check.url.hostname, { allowLoopback, resolver, timeoutMs: CREATE_RESOLUTION_TIMEOUT_MS });
    // Unresolvable (or not in time) is accepted. The answer names neither the addresses nor their
    // ranges: the tenant learns only that the name is refused, as the delivery log says.
    if (!resolved.ok && resolved.reason === 'forbidden-address') {
      throw refused([`the host ${check.url.hostname} resolves to a non-public address`]);
    }
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
      const url = await acceptedUrl(input.url, allowLoopback, options.resolver);
      const id = createOptions.id ?? newId('whk', randomBytes);
      const { secret, sealedSecret } = sealedNewSigningSecret(box, id);
      const webhook = await store.createWebhook(workspaceId, { id, url, eventTypes: input.eventTypes, description: input.description, sealedSecret, createdBy: createOptions.createdBy ?? null });
      return { webhook, secret };
    },

    async updateWebhook(workspaceId, id, patch, expectedVersion) {
      const accepted = patch.url === undefined ? patch : { ...patch, url: await acceptedUrl(patch.url, allowLoopback, options.resolver) };
      return store.updateWebhook(workspaceId, id, accepted, expectedVersion);
    },

    async rotateWebhookKey(workspaceId, id) {
      const { secret, sealedSecret } = sealedNewSigningSecret(box, id);
      const rotation = await store.rotateWebhookKey(workspaceId, id, { sealedSecret, previousSecretExpiresAt: now() + signingKeyOverlapMs });
      return { id: rotation.id, signingKeyVersion: rotation.signingKeyVersion, secret, previousSigningKeyExpiresAt: rotation.previousSigningKeyExpiresAt };
    },
  };
}
