import type { WebhookDeliveryStore } from '../store/webhookDeliveries.js';
import type { SecretBox } from '../auth/secretBox.js';
import { newSigningSecret } from './signing.js';

/**
 * Signing secrets at rest: made here, sealed with the subscription id as context before the store
 * sees them, and opened only by the attempt that signs with them (never kept between attempts).
 */

/** A new signing secret, in plaintext (shown to the subscriber once) and sealed (stored). */
export function sealedNewSigningSecret(box: SecretBox, subscriptionId: string): { secret: string; sealedSecret: string } {
  const secret = newSigningSecret();
  return { secret, sealedSecret: box.seal(secret, subscriptionId) };
}

export type OpenedSigningSecrets = { secrets: string[] } | { problem: string };

/** Opens a delivery's sealed secrets (current first), or says why one did not open (a wrong WEBHOOK_SECRET_KEY). */
export function openSigningSecrets(box: SecretBox, sealedSecrets: readonly string[], subscriptionId: string): OpenedSigningSecrets {
  try {
    return { secrets: sealedSecrets.map((sealed) => box.open(sealed, subscriptionId)) };
  } catch (error) {
    return { problem: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Throws when `box` cannot open the stored signing secrets (one sealed secret is tried, the oldest
 * subscription's): a worker whose WEBHOOK_SECRET_KEY is not the one the secrets were sealed with
 * could sign nothing, and would claim the same deliveries again after every lease.
 */
export async function assertWebhookSecretKeyOpensSecrets(store: Pick<WebhookDeliveryStore, 'oldestSealedSecret'>, box: SecretBox): Promise<void> {
  const oldest = await store.oldestSealedSecret();
  if (oldest === undefined) return;
  const opened = openSigningSecrets(box, [oldest.sealedSecret], oldest.subscriptionId);
  if ('secrets' in opened) return;
  throw new Error(
    `WEBHOOK_SECRET_KEY cannot open the stored webhook signing secrets (tried subscription ${oldest.subscriptionId}: ${opened.problem}). ` +
      'Start the webhook worker with the WEBHOOK_SECRET_KEY the secrets were sealed with.',
  );
}
