import { randomBytes as cryptoRandomBytes } from 'node:crypto';
import type BetterSqlite3 from 'better-sqlite3';
import { schedule, validate, type ScheduledTask } from 'node-cron';
import type { Logger } from '../logger.js';
import { onDeliveriesQueued } from '../store/outboxEvents.js';
import { newId } from '../store/ids.js';
import {
  attemptSucceeded,
  createWebhookDeliveryStore,
  describeOutcome,
  type AttemptError,
  type AttemptOutcome,
  type AttemptToRecord,
  type ClaimedDelivery,
  type RecordedAttempt,
  type RecordingResult,
  type WebhookDeliveryStore,
} from '../store/webhookDeliveries.js';
import { createWorkspaceStore, effectiveLimits } from '../store/workspaces.js';
import { createDeliveryAgents, DELIVERY_TIMEOUT_MS, MAX_RESPONSE_BYTES, sendDeliveryRequest, type DeliveryRequest } from './deliveryRequest.js';
import { nextAttemptAt } from './retrySchedule.js';
import type { SecretBox } from './secretBox.js';
import { deliveryHeaders } from './signing.js';
import { assertWebhookSecretKeyOpensSecrets, openSigningSecrets } from './signingSecrets.js';
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
  /**
   * The due-retry sweep of a started worker: a node-cron expression (seconds field first), or
   * false for none (deliveries then go out only when a commit on this connection wakes it).
   */
  retrySweep?: string | false;
  /**
   * How often a started worker looks whether other connections (servers, other processes) have
   * committed (PRAGMA data_version, a read of shared memory), in milliseconds, to look for
   * deliveries at once instead of at the next sweep; false for never.
   */
  commitPollMs?: number | false;
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
  /**
   * Sweeps for due deliveries on `retrySweep` (node-cron), and at once when deliveries are queued on this connection.
   * Throws, without starting, when WEBHOOK_SECRET_KEY cannot open the stored signing secrets.
   */
  start(): void;
  /** Stops claiming and waits for the attempts in flight (each ends within the timeout). */
  stop(): Promise<void>;
  /** Looks for due deliveries now instead of at the next sweep. */
  wake(): void;
}

export const DEFAULT_WORKER_CONCURRENCY = 16;
/** Lease time kept free after an attempt's budget, for recording it. */
export const LEASE_MARGIN_MS = 5_000;
/** What the delivery log shows for a target refused after resolution (details go to the server log only). */
export const TARGET_NOT_PUBLIC_MESSAGE = "the target's address is not a public address";
export const TARGET_UNRESOLVABLE_MESSAGE = "the target's host name did not resolve";

const BUDGET_SPENT = Symbol('budget spent');
/** `promise`, or BUDGET_SPENT when it has not settled within `ms`. */
function withinBudget<T>(promise: Promise<T>, ms: number): Promise<T | typeof BUDGET_SPENT> {
  let timer: NodeJS.Timeout | undefined;
  const spent = new Promise<typeof BUDGET_SPENT>((resolve) => {
    timer = setTimeout(() => resolve(BUDGET_SPENT), Math.max(0, ms));
  });
  return Promise.race([promise, spent]).finally(() => clearTimeout(timer));
}

/** Every second: retries are due at whole-second precision and the sweep is one indexed query. */
export const DEFAULT_RETRY_SWEEP = '* * * * * *';
/** A worker apart from the server learns of new events within this many milliseconds. */
export const DEFAULT_COMMIT_POLL_MS = 10;

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
  const retrySweep = options.retrySweep ?? DEFAULT_RETRY_SWEEP;
  const commitPollMs = options.commitPollMs ?? DEFAULT_COMMIT_POLL_MS;
  if (retrySweep !== false && !validate(retrySweep)) throw new RangeError(`retrySweep is not a cron expression: ${retrySweep}`);
  if (commitPollMs !== false && !(Number.isInteger(commitPollMs) && commitPollMs >= 1)) throw new RangeError('commitPollMs must be a whole number ≥ 1, or false');
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const maxResponseBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  const { logger, allowLoopback } = options;
  const { secretBox } = options;
  const store = createWebhookDeliveryStore(options.db, { now });
  const workspaces = createWorkspaceStore(options.db, { now });
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError('concurrency must be a whole number ≥ 1');
  const agents = createDeliveryAgents();

  type LogLine = Record<string, unknown>;
  /** An attempt made (its outcome to record), or not made: nothing to record, the claim is left to expire. */
  type Sent = { outcome: AttemptOutcome } | { skipped: string };

  /**
   * One attempt within one budget of `timeoutMs`, measured from its start: the DNS lookup and the
   * request share it, so an attempt ends within `timeoutMs` whatever the resolver does. A lookup
   * that has not answered when the budget is spent is a `timeout` (the attempt as a whole ran out
   * of time; the lookup is abandoned). The attempt is sent only while at least `timeoutMs` plus
   * LEASE_MARGIN_MS of the lease remain, so that it ends and is recorded before anyone else can
   * claim the delivery: every attempt ends well inside its lease.
   */
  async function send(delivery: ClaimedDelivery, secrets: string[], fields: LogLine): Promise<Sent> {
    const attemptedAt = now();
    const started = performance.now();
    const deadline = started + timeoutMs;
    const failed = (error: AttemptError): Sent => ({
      outcome: { attemptedAt, durationMs: Math.round(performance.now() - started), statusCode: null, error },
    });
    const target = checkTargetUrl(delivery.url, { allowLoopback });
    // These reasons derive from the URL the tenant gave alone (no resolution): safe to show.
    if (!target.ok) return failed({ code: 'forbidden-address', message: target.reasons.map((reason) => reason.message).join('; ') });
    const resolved = await withinBudget(
      resolveAndCheck(target.url.hostname, { allowLoopback, deadline, ...(options.lookup ? { lookup: options.lookup } : {}) }),
      deadline - performance.now(),
    );
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

  // Attempts that ended during one turn of the event loop are recorded together, in one
  // transaction, on the next: an outcome waits in memory for that turn only, and a crash meanwhile
  // leaves the delivery claimed, to be attempted again once the lease expires.
  type Ended = { claimed: ClaimedDelivery; outcome: AttemptOutcome; jitter: number; done: (result: RecordingResult) => void };
  let toRecord: Ended[] = [];
  function recordSoon(claimed: ClaimedDelivery, outcome: AttemptOutcome): Promise<RecordingResult> {
    if (toRecord.length === 0) setImmediate(recordEnded);
    return new Promise((done) => toRecord.push({ claimed, outcome, jitter: random(), done }));
  }
  /** When a failed attempt is followed by another, on the schedule its workspace has in force now. */
  function retryAt({ claimed, outcome, jitter }: Ended, at: number): number | null {
    if (attemptSucceeded(outcome)) return null;
    const workspace = workspaces.getWorkspace(claimed.workspaceId);
    return nextAttemptAt({
      delaysSeconds: workspace ? effectiveLimits(workspace).webhookRetryDelaysSeconds.inForce : [],
      failedAttemptNumber: claimed.attemptCount + 1,
      nowMs: at,
      jitter,
      statusCode: outcome.statusCode,
      retryAfter: outcome.retryAfter ?? null,
    });
  }
  // The room the recorded attempts leave is claimed in the same transaction: one write
  // transaction a turn, not two. A failed claim is logged and leaves the records to commit.
  const recordAndClaim = options.db.transaction((ended: Ended[], room: number) => {
    const at = now();
    const batch: AttemptToRecord[] = ended.map((attempt) => ({ claimed: attempt.claimed, outcome: attempt.outcome, retryAt: retryAt(attempt, at) }));
    const results = store.recordAttempts(batch);
    let claimed: ClaimedDelivery[] = [];
    if (room > 0) {
      try {
        claimed = store.claimDue(workerId, room);
      } catch (error) {
        logger.error('webhook claim failed', { workerId, error });
      }
    }
    return { results, claimed };
  });
  function recordEnded(): void {
    const batch = toRecord;
    toRecord = [];
    // The batch's attempts still count in inFlight; their slots are free once they are recorded.
    const room = running ? concurrency - inFlight.size + batch.length : 0;
    let results: RecordingResult[];
    let claimed: ClaimedDelivery[] = [];
    try {
      ({ results, claimed } = recordAndClaim.immediate(batch, room));
    } catch (error) {
      results = batch.map(() => ({ error }));
    }
    batch.forEach(({ done }, index) => done(results[index]!));
    for (const delivery of claimed) startAttempt(delivery);
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
    const opened = openSigningSecrets(secretBox, delivery.sealedSecrets, delivery.subscriptionId);
    if ('problem' in opened) {
      // Nothing can be signed: leave the claim to expire, so the attempt is tried again after the
      // lease rather than recorded as the subscriber's failure.
      logger.error('webhook delivery not signed', { ...fields, problem: opened.problem });
      return undefined;
    }
    let sent: Sent;
    try {
      sent = await send(delivery, opened.secrets, fields);
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
    const { outcome } = sent;
    const result = await recordSoon(delivery, outcome);
    if ('error' in result) {
      // Nothing of this attempt was written: the delivery stays claimed and is attempted again
      // once the lease expires (the subscriber may see the event twice, never lose it).
      logger.error('webhook attempt not recorded', { ...fields, outcome: describeOutcome(outcome), error: result.error });
      return undefined;
    }
    if ('lost' in result) {
      logger.warn('webhook attempt not recorded: the claim was lost', { ...fields, outcome: describeOutcome(outcome) });
      return undefined;
    }
    const { recorded } = result;
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
  let sweep: ScheduledTask | undefined;
  let wakeScheduled = false;
  let unsubscribe: (() => void) | undefined;
  let commitPoll: NodeJS.Timeout | undefined;

  /** Wakes the worker whenever another connection has committed since the last look. */
  function pollOtherCommits(intervalMs: number): NodeJS.Timeout {
    // Changes only with other connections' commits, this worker's own claims and records excluded.
    const dataVersion = options.db.prepare('PRAGMA data_version').pluck();
    let seen = dataVersion.get();
    const timer = setInterval(() => {
      let version: unknown;
      try {
        version = dataVersion.get();
      } catch {
        return; // a closed database: the worker is being stopped
      }
      if (version !== seen) {
        seen = version;
        wake();
      }
    }, intervalMs);
    // The sweep, not this, keeps a worker process alive.
    return timer.unref();
  }

  function pump(): void {
    while (running && inFlight.size < concurrency) {
      let batch: ClaimedDelivery[];
      try {
        batch = store.claimDue(workerId, concurrency - inFlight.size);
      } catch (error) {
        // SQLITE_BUSY beyond the busy timeout, a closed database…: try again at the next sweep or wake-up.
        logger.error('webhook claim failed', { workerId, error });
        return;
      }
      if (batch.length === 0) return;
      for (const delivery of batch) startAttempt(delivery);
    }
  }

  function startAttempt(delivery: ClaimedDelivery): void {
    const task = attempt(delivery)
      .catch((error: unknown) => logger.error('webhook attempt failed unexpectedly', { workerId, deliveryId: delivery.id, error }))
      .finally(() => {
        inFlight.delete(task);
        // Not pump(): the attempts ending in this turn make room together, filled by one claim.
        wake();
      });
    inFlight.add(task);
  }

  function wake(): void {
    if (!running || wakeScheduled) return;
    wakeScheduled = true;
    setImmediate(() => {
      wakeScheduled = false;
      pump();
    });
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
      assertWebhookSecretKeyOpensSecrets(store, secretBox);
      running = true;
      unsubscribe = onDeliveriesQueued(options.db, wake);
      if (retrySweep !== false) sweep = schedule(retrySweep, pump, { name: 'webhook-retry-sweep', noOverlap: true });
      if (commitPollMs !== false) commitPoll = pollOtherCommits(commitPollMs);
      logger.info('webhook worker started', { workerId, concurrency, retrySweep, commitPollMs, timeoutMs });
      pump();
    },

    async stop() {
      if (!running) return;
      running = false;
      clearInterval(commitPoll);
      commitPoll = undefined;
      await sweep?.destroy();
      sweep = undefined;
      unsubscribe?.();
      await Promise.allSettled([...inFlight]);
      agents.destroy();
      logger.info('webhook worker stopped', { workerId });
    },

    wake,
  };
}
