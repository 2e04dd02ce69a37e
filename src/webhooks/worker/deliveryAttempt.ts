import type { Logger } from '../../logger.js';
import type { AttemptError, AttemptOutcome, ClaimedDelivery } from '../../store/webhookDeliveries.js';
import { sendDeliveryRequest, type DeliveryAgents, type DeliveryRequest } from '../deliveryRequest.js';
import type { SecretBox } from '../../auth/secretBox.js';
import { deliveryHeaders } from '../signing.js';
import { openSigningSecrets } from '../signingSecrets.js';
import type { HostResolver } from '../hostResolver.js';
import { awaitsResolution, checkTargetUrl, resolveAndCheck } from '../targetGuard.js';

/**
 * One attempt of one claimed delivery: open its secrets, resolve and guard the target, sign at
 * sending with a fresh `t`, send one HTTP request within the attempt's deadline, and classify the
 * outcome. Recording it is the recorder's (attemptRecorder.ts).
 */

/** Lease time kept free after an attempt's budget, for recording it. */
export const LEASE_MARGIN_MS = 5_000;
/** What the delivery log shows for a target refused after resolution (details go to the server log only). */
export const TARGET_NOT_PUBLIC_MESSAGE = "the target's address is not a public address";
export const TARGET_UNRESOLVABLE_MESSAGE = "the target's host name did not resolve";

/** What every log line about one attempt carries. */
export type AttemptLogFields = Record<string, unknown>;

/** The URL as far as a log may show it: the path and query can carry a subscriber's token. */
function loggableTarget(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid URL)';
  }
}

export function attemptLogFields(workerId: string, delivery: ClaimedDelivery): AttemptLogFields {
  return {
    workerId,
    deliveryId: delivery.id,
    subscriptionId: delivery.subscriptionId,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    attempt: delivery.attemptCount + 1,
    target: loggableTarget(delivery.url),
  };
}

const BUDGET_SPENT = Symbol('budget spent');
/** `promise`, or BUDGET_SPENT when it has not settled within `ms`. */
function withinBudget<T>(promise: Promise<T>, ms: number): Promise<T | typeof BUDGET_SPENT> {
  let timer: NodeJS.Timeout | undefined;
  const spent = new Promise<typeof BUDGET_SPENT>((resolve) => {
    timer = setTimeout(() => resolve(BUDGET_SPENT), Math.max(0, ms));
  });
  return Promise.race([promise, spent]).finally(() => clearTimeout(timer));
}

export interface DeliveryAttemptOptions {
  secretBox: SecretBox;
  logger: Logger;
  /** Admit loopback targets (WEBHOOK_ALLOW_LOOPBACK). */
  allowLoopback: boolean;
  now: () => number;
  /** DNS resolution of subscriber host names, cached (hostResolver.ts). */
  resolver: HostResolver;
  timeoutMs: number;
  maxResponseBytes: number;
  /** Connections kept alive between attempts. */
  agents: DeliveryAgents;
  /** Extra trusted certificate authorities (tests with a local TLS receiver). */
  ca?: DeliveryRequest['ca'];
}

/**
 * Makes one attempt: its outcome, to record; or undefined when none was made (the secrets did not
 * open, too little of the lease was left, or a bug): nothing to record, the claim is left to
 * expire and the delivery is attempted again after it. Never throws.
 */
export type DeliveryAttempt = (delivery: ClaimedDelivery, fields: AttemptLogFields, hooks?: AttemptHooks) => Promise<AttemptOutcome | undefined>;

export interface AttemptHooks {
  /**
   * How the attempt waits for a host name whose answer is not cached: the loop frees the
   * attempt's slot meanwhile and takes one again before it goes on (deliveryLoop.ts), so that a
   * slow name never holds the slots of the other deliveries.
   */
  whileResolving<T>(resolution: Promise<T>): Promise<T>;
}

export function createDeliveryAttempt(options: DeliveryAttemptOptions): DeliveryAttempt {
  const { secretBox, logger, allowLoopback, now, timeoutMs, maxResponseBytes, agents } = options;

  /** An attempt made (its outcome to record), or not made: nothing to record, the claim is left to expire. */
  type Sent = { outcome: AttemptOutcome } | { skipped: string };

  /**
   * One attempt within one budget of `timeoutMs`, measured from its start: the DNS lookup and the
   * request share it, so an attempt ends within `timeoutMs` whatever the resolver does. A lookup
   * that has not answered when the budget is spent is a `timeout` (the attempt as a whole ran out
   * of time; the lookup is abandoned). A name whose answer is not cached is waited for through
   * `hooks.whileResolving`, without the attempt's slot; the resolver gives a query up after
   * DNS_QUERY_TIMEOUT_MS (a `dns-failure`). The attempt is sent only while at least `timeoutMs` plus
   * LEASE_MARGIN_MS of the lease remain, so that it ends and is recorded before anyone else can
   * claim the delivery: every attempt ends well inside its lease.
   */
  async function send(delivery: ClaimedDelivery, secrets: string[], fields: AttemptLogFields, hooks: AttemptHooks | undefined): Promise<Sent> {
    const attemptedAt = now();
    const started = performance.now();
    const deadline = started + timeoutMs;
    const failed = (error: AttemptError): Sent => ({
      outcome: { attemptedAt, durationMs: Math.round(performance.now() - started), statusCode: null, error },
    });
    const target = checkTargetUrl(delivery.url, { allowLoopback });
    // These reasons derive from the URL the tenant gave alone (no resolution): safe to show.
    if (!target.ok) return failed({ code: 'forbidden-address', message: target.reasons.map((reason) => reason.message).join('; ') });
    const resolution = withinBudget(resolveAndCheck(target.url.hostname, { allowLoopback, resolver: options.resolver }), deadline - performance.now());
    const resolved = await (hooks && awaitsResolution(target.url.hostname, options.resolver) ? hooks.whileResolving(resolution) : resolution);
    if (resolved === BUDGET_SPENT) {
      logger.warn('webhook target lookup timed out', { ...fields, host: target.url.hostname, timeoutMs });
      return failed({ code: 'timeout', message: `no status within ${timeoutMs} ms (the target's host name did not resolve in time)` });
    }
    if (!resolved.ok) {
      // The tenant sees a generic message; the addresses, ranges and resolver errors (which
      // describe the internal network and DNS) go to the server log only.
      logger.warn('webhook target refused', { ...fields, reason: resolved.reason, detail: resolved.message });
      return resolved.reason === 'unresolvable'
        ? failed({ code: 'dns-failure', message: TARGET_UNRESOLVABLE_MESSAGE })
        : failed({ code: 'forbidden-address', message: TARGET_NOT_PUBLIC_MESSAGE });
    }

    if (now() > delivery.leaseExpiresAt - timeoutMs - LEASE_MARGIN_MS) {
      return { skipped: 'too little of the lease is left to send and record the attempt' };
    }
    const body = Buffer.from(delivery.payload, 'utf8');
    const headers = deliveryHeaders({
      eventId: delivery.eventId,
      eventType: delivery.eventType,
      deliveryId: delivery.id,
      subscriptionId: delivery.subscriptionId,
      secrets,
      timestampSeconds: Math.floor(now() / 1000),
      rawBody: body,
    });
    const response = await sendDeliveryRequest({
      url: target.url,
      addresses: resolved.addresses,
      headers: { ...headers },
      body,
      // What is left of the attempt's budget after the lookup.
      timeoutMs: Math.max(1, Math.floor(deadline - performance.now())),
      maxResponseBytes,
      agents,
      ...(options.ca !== undefined ? { ca: options.ca } : {}),
    });
    return {
      outcome: {
        attemptedAt,
        durationMs: Math.round(performance.now() - started),
        statusCode: response.statusCode,
        error: response.error?.code === 'timeout' ? { code: 'timeout', message: `no status within ${timeoutMs} ms` } : response.error,
        retryAfter: response.retryAfter,
      },
    };
  }

  return async (delivery, fields, hooks) => {
    const opened = openSigningSecrets(secretBox, delivery.sealedSecrets, delivery.subscriptionId);
    if ('problem' in opened) {
      // Nothing can be signed: leave the claim to expire, so the attempt is tried again after the
      // lease rather than recorded as the subscriber's failure.
      logger.error('webhook delivery not signed', { ...fields, problem: opened.problem });
      return undefined;
    }
    let sent: Sent;
    try {
      sent = await send(delivery, opened.secrets, fields, hooks);
    } catch (error) {
      // A bug rather than the subscriber's failure: record nothing and let the lease expire, so the
      // attempt is made again after it instead of in a tight loop.
      logger.error('webhook attempt failed unexpectedly', { ...fields, error });
      return undefined;
    }
    if ('skipped' in sent) {
      logger.warn('webhook attempt not sent', { ...fields, reason: sent.skipped, leaseExpiresAt: new Date(delivery.leaseExpiresAt).toISOString() });
      return undefined;
    }
    return sent.outcome;
  };
}
