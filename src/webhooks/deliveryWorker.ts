import { randomBytes as cryptoRandomBytes } from 'node:crypto';
import type BetterSqlite3 from 'better-sqlite3';
import type { Logger } from '../logger.js';
import type { Housekeeping } from '../scheduledJobs.js';
import { onDeliveriesQueued } from '../store/outboxEvents.js';
import { newId } from '../store/ids.js';
import {
  createWebhookDeliveryStore,
  describeOutcome,
  type AttemptError,
  type AttemptOutcome,
  type ClaimedDelivery,
  type RecordedAttempt,
  type WebhookDeliveryStore,
  WEBHOOK_LOG_RETENTION_MS,
} from '../store/webhookDeliveries.js';
import { DELIVERY_TIMEOUT_MS, MAX_RESPONSE_BYTES, sendDeliveryRequest, type DeliveryRequest } from './deliveryRequest.js';
import type { SecretBox } from './secretBox.js';
import { deliveryHeaders } from './signing.js';
import { checkTargetUrl, resolveAndCheck, type LookupAll } from './targetGuard.js';

/**
 * The webhook delivery worker. Delivery state is data (src/store/webhookDeliveries.ts): the worker
 * claims due deliveries with a lease, makes one attempt each (target checked after every DNS
 * resolution, signed at sending with a fresh `t`), and records the attempt under its lease. Any
 * number of workers, in the server process or apart (`npm run worker`), may share one database.
 */

export interface DeliveryWorkerOptions {
  db: BetterSqlite3.Database;
  secretBox: SecretBox;
  logger: Logger;
  /** Admit loopback targets (WEBHOOK_ALLOW_LOOPBACK). */
  allowLoopback: boolean;
  /** Milliseconds since the epoch; also the store's clock. */
  now?: () => number;
  /** A number in [0, 1): the retry jitter. */
  random?: () => number;
  /** DNS resolution of subscriber host names. */
  lookup?: LookupAll;
  /** Names this worker's leases; unique per worker (a new `wkr_…` id by default). */
  workerId?: string;
  /** Attempts in flight at once. */
  concurrency?: number;
  /** How often a started worker looks for due deliveries without being woken. */
  pollIntervalMs?: number;
  timeoutMs?: number;
  maxResponseBytes?: number;
  /** Extra trusted certificate authorities (tests with a local TLS receiver). */
  ca?: DeliveryRequest['ca'];
}

export interface DeliveryWorker {
  readonly workerId: string;
  readonly store: WebhookDeliveryStore;
  /** Claims and sends everything due now, and resolves when those attempts are recorded. */
  runDue(): Promise<number>;
  /** Polls every `pollIntervalMs`, and at once when deliveries are queued on this connection. */
  start(): void;
  /** Stops claiming and waits for the attempts in flight (each ends within the timeout). */
  stop(): Promise<void>;
  /** Looks for due deliveries now instead of at the next poll. */
  wake(): void;
}

export const DEFAULT_WORKER_CONCURRENCY = 16;
export const DEFAULT_POLL_INTERVAL_MS = 1000;

/** The URL as far as a log may show it: the path and query can carry a subscriber's token. */
function loggableTarget(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid URL)';
  }
}

export function createDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const workerId = options.workerId ?? newId('wkr', cryptoRandomBytes);
  const concurrency = options.concurrency ?? DEFAULT_WORKER_CONCURRENCY;
  const pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const maxResponseBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  const { logger, allowLoopback } = options;
  const store = createWebhookDeliveryStore(options.db, { secretBox: options.secretBox, now });
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError('concurrency must be a whole number ≥ 1');

  async function send(delivery: ClaimedDelivery): Promise<AttemptOutcome> {
    const attemptedAt = now();
    const started = performance.now();
    const failed = (error: AttemptError): AttemptOutcome => ({
      attemptedAt,
      durationMs: Math.round(performance.now() - started),
      statusCode: null,
      error,
    });
    const target = checkTargetUrl(delivery.url, { allowLoopback });
    if (!target.ok) return failed({ code: 'forbidden-address', message: target.reasons.map((reason) => reason.message).join('; ') });
    const resolved = await resolveAndCheck(target.url.hostname, { allowLoopback, ...(options.lookup ? { lookup: options.lookup } : {}) });
    if (!resolved.ok) return failed({ code: resolved.reason === 'unresolvable' ? 'dns-failure' : 'forbidden-address', message: resolved.message });

    const body = Buffer.from(delivery.payload, 'utf8');
    const headers = deliveryHeaders({
      eventId: delivery.eventId,
      eventType: delivery.eventType,
      deliveryId: delivery.id,
      subscriptionId: delivery.subscriptionId,
      secrets: delivery.secrets,
      timestampSeconds: Math.floor(now() / 1000),
      rawBody: body,
    });
    const response = await sendDeliveryRequest({
      url: target.url,
      addresses: resolved.addresses,
      headers: { ...headers },
      body,
      timeoutMs,
      maxResponseBytes,
      ...(options.ca !== undefined ? { ca: options.ca } : {}),
    });
    return {
      attemptedAt,
      durationMs: Math.round(performance.now() - started),
      statusCode: response.statusCode,
      error: response.error,
      retryAfter: response.retryAfter,
    };
  }

  async function attempt(delivery: ClaimedDelivery): Promise<RecordedAttempt | undefined> {
    const fields = {
      workerId,
      deliveryId: delivery.id,
      subscriptionId: delivery.subscriptionId,
      eventId: delivery.eventId,
      eventType: delivery.eventType,
      attempt: delivery.attemptCount + 1,
      target: loggableTarget(delivery.url),
    };
    if (delivery.secretProblem !== undefined) {
      // Nothing can be signed: leave the claim to expire, so the attempt is tried again after the
      // lease rather than recorded as the subscriber's failure.
      logger.error('webhook delivery not signed', { ...fields, problem: delivery.secretProblem });
      return undefined;
    }
    let outcome: AttemptOutcome;
    try {
      outcome = await send(delivery);
    } catch (error) {
      // A bug rather than the subscriber's failure: record nothing and let the lease expire, so the
      // attempt is made again after it instead of in a tight loop.
      logger.error('webhook attempt failed unexpectedly', { ...fields, error });
      return undefined;
    }
    const recorded = store.recordAttempt(delivery, workerId, outcome, random());
    if (!recorded) {
      logger.warn('webhook attempt not recorded: the claim was lost', { ...fields, outcome: describeOutcome(outcome) });
      return undefined;
    }
    const line = {
      ...fields,
      statusCode: outcome.statusCode,
      error: outcome.error?.code ?? null,
      durationMs: outcome.durationMs,
      deliveryStatus: recorded.status,
      nextAttemptAt: recorded.nextAttemptAt === null ? null : new Date(recorded.nextAttemptAt).toISOString(),
    };
    if (recorded.succeeded) logger.info('webhook delivered', line);
    else logger.warn('webhook attempt failed', { ...line, reason: describeOutcome(outcome) });
    if (recorded.disabled) logger.warn('webhook subscription disabled', { ...fields, code: recorded.disabled });
    return recorded;
  }

  // --- the running loop -------------------------------------------------------------------------
  const inFlight = new Set<Promise<unknown>>();
  let running = false;
  let pollTimer: NodeJS.Timeout | undefined;
  let wakeScheduled = false;
  let unsubscribe: (() => void) | undefined;

  function pump(): void {
    while (running && inFlight.size < concurrency) {
      let batch: ClaimedDelivery[];
      try {
        batch = store.claimDue(workerId, concurrency - inFlight.size);
      } catch (error) {
        // SQLITE_BUSY beyond the busy timeout, a closed database…: try again at the next poll.
        logger.error('webhook claim failed', { workerId, error });
        return;
      }
      if (batch.length === 0) return;
      for (const delivery of batch) {
        const task = attempt(delivery)
          .catch((error: unknown) => logger.error('webhook attempt failed unexpectedly', { workerId, deliveryId: delivery.id, error }))
          .finally(() => {
            inFlight.delete(task);
            pump();
          });
        inFlight.add(task);
      }
    }
  }

  function schedulePoll(): void {
    pollTimer = setTimeout(() => {
      pump();
      if (running) schedulePoll();
    }, pollIntervalMs);
    pollTimer.unref();
  }

  return {
    workerId,
    store,

    async runDue() {
      let attempted = 0;
      for (;;) {
        const batch = store.claimDue(workerId, concurrency);
        if (batch.length === 0) return attempted;
        await Promise.all(batch.map((delivery) => attempt(delivery)));
        attempted += batch.length;
      }
    },

    start() {
      if (running) return;
      running = true;
      unsubscribe = onDeliveriesQueued(options.db, () => this.wake());
      logger.info('webhook worker started', { workerId, concurrency, pollIntervalMs, timeoutMs });
      pump();
      schedulePoll();
    },

    async stop() {
      if (!running) return;
      running = false;
      clearTimeout(pollTimer);
      unsubscribe?.();
      await Promise.allSettled([...inFlight]);
      logger.info('webhook worker stopped', { workerId });
    },

    wake() {
      if (!running || wakeScheduled) return;
      wakeScheduled = true;
      setImmediate(() => {
        wakeScheduled = false;
        pump();
      });
    },
  };
}

/**
 * The webhook jobs of the scheduled-jobs list, idempotent and safe in every process: forget
 * previous secrets whose overlap has ended (attempts already stop using them at the expiry), and
 * purge delivery logs 30 days after they end and events 30 days after they occur.
 */
export function deliveryHousekeeping(store: WebhookDeliveryStore, now: () => number): Housekeeping[] {
  return [
    { name: 'end-webhook-rotation-overlaps', every: '* * * * *', run: () => store.endExpiredRotationOverlaps() },
    { name: 'purge-webhook-deliveries', every: '23 * * * *', run: () => store.purgeEndedDeliveries(now() - WEBHOOK_LOG_RETENTION_MS) },
    { name: 'purge-outbox-events', every: '29 * * * *', run: () => store.purgeEvents(now() - WEBHOOK_LOG_RETENTION_MS) },
  ];
}
