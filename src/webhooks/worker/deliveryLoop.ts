import { randomBytes as cryptoRandomBytes } from 'node:crypto';
import type BetterSqlite3 from 'better-sqlite3';
import { schedule, validate, type ScheduledTask } from 'node-cron';
import type { Logger } from '../../logger.js';
import { isEngine, type StoreSource } from '../../store/engine.js';
import { newId } from '../../store/ids.js';
import { onDeliveriesQueued, onDeliveriesQueuedAnywhere } from '../../store/outboxEvents.js';
import { createWebhookDeliveryStore, DELIVERY_LEASE_MS, type ClaimedDelivery, type WebhookDeliveryStore } from '../../store/webhookDeliveries.js';
import { createDeliveryAgents, DELIVERY_TIMEOUT_MS, MAX_RESPONSE_BYTES, type DeliveryRequest } from '../deliveryRequest.js';
import type { SecretBox } from '../../auth/secretBox.js';
import { assertWebhookSecretKeyOpensSecrets } from '../signingSecrets.js';
import { createHostResolver, type HostResolver } from '../hostResolver.js';
import type { LookupAll } from '../targetGuard.js';
import { createAttemptRecorder } from './attemptRecorder.js';
import { attemptLogFields, createDeliveryAttempt, LEASE_MARGIN_MS } from './deliveryAttempt.js';

/**
 * The webhook delivery worker's loop. Delivery state is data (src/store/webhookDeliveries.ts):
 * the loop claims due deliveries with a lease (when started, when woken by a commit, on the retry
 * sweep, and in the transaction that records the attempts that ended), makes one attempt each
 * (deliveryAttempt.ts) and has it recorded under its lease (attemptRecorder.ts); an attempt
 * waiting for a host name's answer holds no slot meanwhile (see `holding`), and at most
 * `maxPerTarget` attempts to one target (scheme, host and port) hold slots at once (see `held`), so
 * that slow receivers never take every slot. Stopping ends the
 * claims and waits for the attempts in flight. Any number of workers, in the server process or
 * apart (`npm run worker`), may share one database.
 */

export interface DeliveryWorkerOptions {
  db: StoreSource;
  secretBox: SecretBox;
  logger: Logger;
  /** Admit loopback targets (WEBHOOK_ALLOW_LOOPBACK). */
  allowLoopback: boolean;
  /** Milliseconds since the epoch; also the store's clock. */
  now?: () => number;
  /** A number in [0, 1): the retry jitter. */
  random?: () => number;
  /** DNS resolution of subscriber host names, with its cache: the process's shared one (a new one by default). */
  resolver?: HostResolver;
  /** Without `resolver`: a `dns.lookup`-shaped source for a new resolver (tests). */
  lookup?: LookupAll;
  /** Names this worker's leases; unique per worker (a new `wkr_…` id by default). */
  workerId?: string;
  /** Attempts in flight at once, each holding a slot; an attempt waiting for DNS holds none (see `maxResolving`). */
  concurrency?: number;
  /**
   * Attempts that may wait for a host name's answer at once without holding a slot, beyond
   * `concurrency`: one more waits in its slot.
   */
  maxResolving?: number;
  /**
   * Attempts to one slow target (scheme, host and port of its URL) holding slots at once; a claimed
   * delivery to a target at its cap waits aside, without a slot (see `maxHeld`). By default a
   * quarter of `concurrency`, at least 2 (targetCap()). A target is slow while one of its attempts
   * has been sending for longer than SLOW_TARGET_MS, and for SLOW_TARGET_MEMORY_MS after one took
   * that long.
   */
  maxPerTarget?: number;
  /**
   * Attempts to any one target holding slots at once, slow or not: by default all slots but a
   * quarter (at least 1), so that a target that turns slow before it is known to be leaves slots
   * for the others, and one fast receiver still gets most of them.
   */
  maxPerAnyTarget?: number;
  /**
   * Claimed deliveries that may wait aside for their target, all targets together; a delivery
   * to a target at its cap beyond them is given up at once, due again TARGET_BUSY_DEFER_MS later.
   */
  maxHeld?: number;
  /**
   * The due-retry sweep of a started worker: a node-cron expression (seconds field first), or
   * false for none (deliveries then go out only when a commit on this connection wakes it).
   */
  retrySweep?: string | false;
  /**
   * How often a started worker on a SQLite connection looks whether other connections (servers,
   * other processes) have committed (PRAGMA data_version, a read of shared memory), in
   * milliseconds, to look for deliveries at once instead of at the next sweep; false for never.
   */
  commitPollMs?: number | false;
  timeoutMs?: number;
  /** How long a claim lasts (WEBHOOK_DELIVERY_LEASE_SECONDS; DELIVERY_LEASE_MS by default): longer than `timeoutMs` and LEASE_MARGIN_MS. */
  leaseMs?: number;
  maxResponseBytes?: number;
  /** Extra trusted certificate authorities (tests with a local TLS receiver). */
  ca?: DeliveryRequest['ca'];
}

export interface DeliveryWorker {
  readonly workerId: string;
  readonly store: WebhookDeliveryStore;
  /**
   * Sweeps for due deliveries on `retrySweep` (node-cron), and at once when deliveries are queued on this connection.
   * Rejects, without starting, when WEBHOOK_SECRET_KEY cannot open the stored signing secrets.
   */
  start(): Promise<void>;
  /** Stops claiming and waits for the attempts in flight (each ends within the timeout). */
  stop(): Promise<void>;
  /** Looks for due deliveries now instead of at the next sweep. */
  wake(): void;
  /**
   * Resolves once no attempt is in flight and no look for due deliveries is pending: with a
   * started worker, once its last look found nothing due (or could not claim); at once when so.
   */
  idle(): Promise<void>;
}

export const DEFAULT_WORKER_CONCURRENCY = 16;
/** Attempts waiting for DNS without a slot: cheap (a pending promise each), bounded so that claims stay bounded. */
export const DEFAULT_MAX_RESOLVING = 64;
/** Claimed deliveries waiting aside for a target at its cap: a pending lease each, bounded so that claims stay bounded. */
export const DEFAULT_MAX_HELD = 64;
/** A delivery to a target at its cap that cannot wait aside is due again this much later (no attempt counted). */
export const TARGET_BUSY_DEFER_MS = 1_000;
/** The default cap of attempts holding slots per slow target: a quarter of the slots, at least 2. */
export const targetCap = (concurrency: number): number => Math.max(2, Math.floor(concurrency / 4));
/** An attempt sending for longer than this makes its target slow. */
export const SLOW_TARGET_MS = 1_000;
/** A target stays slow this long after an attempt to it took longer than SLOW_TARGET_MS. */
export const SLOW_TARGET_MEMORY_MS = 60_000;
/** Every second: retries are due at whole-second precision and the sweep is one indexed query. */
export const DEFAULT_RETRY_SWEEP = '* * * * * *';
/** A worker apart from the server learns of new events within this many milliseconds. */
export const DEFAULT_COMMIT_POLL_MS = 10;

/** The target a cap counts: scheme, host and port (the default port written out); an invalid URL is a target of its own (its attempt fails at once). */
export function targetKey(url: string): string {
  try {
    const parsed = new URL(url);
    const port = parsed.port || (parsed.protocol === 'https:' ? '443' : parsed.protocol === 'http:' ? '80' : '');
    return `${parsed.protocol}//${parsed.hostname.toLowerCase()}:${port}`;
  } catch {
    return '(invalid URL)';
  }
}

export function createDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const now = options.now ?? Date.now;
  const workerId = options.workerId ?? newId('wkr', cryptoRandomBytes);
  const concurrency = options.concurrency ?? DEFAULT_WORKER_CONCURRENCY;
  const retrySweep = options.retrySweep ?? DEFAULT_RETRY_SWEEP;
  const commitPollMs = options.commitPollMs ?? DEFAULT_COMMIT_POLL_MS;
  if (retrySweep !== false && !validate(retrySweep)) throw new RangeError(`retrySweep is not a cron expression: ${retrySweep}`);
  if (commitPollMs !== false && !(Number.isInteger(commitPollMs) && commitPollMs >= 1)) throw new RangeError('commitPollMs must be a whole number ≥ 1, or false');
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const { logger, secretBox } = options;
  const leaseMs = options.leaseMs ?? DELIVERY_LEASE_MS;
  if (!(leaseMs > timeoutMs + LEASE_MARGIN_MS)) throw new RangeError(`leaseMs (${leaseMs}) must exceed timeoutMs and LEASE_MARGIN_MS (${timeoutMs + LEASE_MARGIN_MS}): no attempt could start`);
  const store = createWebhookDeliveryStore(options.db, { now, leaseMs });
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError('concurrency must be a whole number ≥ 1');
  const maxResolving = options.maxResolving ?? DEFAULT_MAX_RESOLVING;
  if (!Number.isInteger(maxResolving) || maxResolving < 0) throw new RangeError('maxResolving must be a whole number ≥ 0');
  const maxPerTarget = options.maxPerTarget ?? targetCap(concurrency);
  if (!Number.isInteger(maxPerTarget) || maxPerTarget < 1) throw new RangeError('maxPerTarget must be a whole number ≥ 1');
  const maxPerAnyTarget = options.maxPerAnyTarget ?? Math.max(1, concurrency - targetCap(concurrency));
  if (!Number.isInteger(maxPerAnyTarget) || maxPerAnyTarget < 1) throw new RangeError('maxPerAnyTarget must be a whole number ≥ 1');
  const maxHeld = options.maxHeld ?? DEFAULT_MAX_HELD;
  if (!Number.isInteger(maxHeld) || maxHeld < 0) throw new RangeError('maxHeld must be a whole number ≥ 0');
  const agents = createDeliveryAgents();
  const resolver = options.resolver ?? createHostResolver({ now, ...(options.lookup ? { lookup: options.lookup } : {}) });
  const attempt = createDeliveryAttempt({
    secretBox,
    logger,
    allowLoopback: options.allowLoopback,
    now,
    timeoutMs,
    maxResponseBytes: options.maxResponseBytes ?? MAX_RESPONSE_BYTES,
    agents,
    resolver,
    ...(options.ca !== undefined ? { ca: options.ca } : {}),
  });
  const recorder = createAttemptRecorder({
    db: options.db,
    store,
    logger,
    workerId,
    now,
    random: options.random ?? Math.random,
    // The recorded attempts still count in inFlight; their slots are free once they are recorded.
    roomAfter: (recording) => reserveRoom(recording),
    skipSubscriptions: () => skipSubscriptions(),
    onClaimed: (deliveries, room) => {
      reserved -= room;
      grantWaitingSlots();
      admit(deliveries);
      settleIfIdle();
    },
  });

  /**
   * Slots. An attempt holds one from its claim to its record, except while it waits for DNS
   * (whileResolving): then it frees it, so that the loop claims other deliveries, and takes one
   * again (before any new claim) once its name has answered. One slow name, or many, never holds
   * the slots of deliveries to other targets.
   */
  let holding = 0;
  /** Attempts waiting for DNS without a slot. */
  let resolving = 0;
  const slotWaiters: Array<() => void> = [];
  function grantWaitingSlots(): void {
    while (slotWaiters.length > 0 && holding + reserved < concurrency) {
      holding += 1;
      slotWaiters.shift()!();
    }
    startHeld();
  }

  /**
   * Targets. An attempt counts against its target's cap while it holds a slot (not while it waits
   * for DNS). A claimed delivery whose target is at its cap takes no slot: it waits aside in
   * `held`, under its lease, and starts as soon as its target is below the cap and a slot is free
   * (after attempts back from DNS, before new claims); beyond `maxHeld` such deliveries are given
   * up (releaseClaims), due again TARGET_BUSY_DEFER_MS later. On stop() the held ones are given up,
   * due at once for any worker. So one slow target, or a few, holds at most `maxPerTarget` slots
   * each, and the others go on being delivered.
   */
  const perTarget = new Map<string, number>();
  const held = new Map<string, ClaimedDelivery[]>();
  let heldCount = 0;
  /** Deliveries being given up (releaseClaims under way). */
  const releasing = new Set<Promise<void>>();
  /** Until when each target that was slow lately counts as slow. */
  const slowUntil = new Map<string, number>();
  /** The attempts counted against their target's cap: the target, and since when it has been sending (undefined while it waits for DNS or is being recorded). */
  const counted = new Map<ClaimedDelivery, { key: string; sendingSince: number | undefined }>();
  function isSlow(key: string): boolean {
    const at = now();
    const until = slowUntil.get(key);
    if (until !== undefined) {
      if (until > at) return true;
      slowUntil.delete(key);
    }
    for (const attempt of counted.values()) {
      if (attempt.key === key && attempt.sendingSince !== undefined && at - attempt.sendingSince > SLOW_TARGET_MS) return true;
    }
    return false;
  }
  const atCap = (key: string): boolean => {
    const count = perTarget.get(key) ?? 0;
    return count >= maxPerAnyTarget || (count >= maxPerTarget && isSlow(key));
  };
  /**
   * The subscriptions of the deliveries in flight or held whose target is at its cap: claims skip
   * them, so that they stay due for a later claim instead of being claimed only to wait aside
   * (only deliveries of subscriptions not yet seen at a busy target are held aside).
   */
  function skipSubscriptions(): string[] {
    const skip = new Set<string>();
    for (const [delivery, { key }] of counted) if (atCap(key)) skip.add(delivery.subscriptionId);
    for (const [key, waiting] of held) if (atCap(key)) for (const delivery of waiting) skip.add(delivery.subscriptionId);
    return [...skip];
  }
  function countTarget(key: string, by: 1 | -1): void {
    const count = (perTarget.get(key) ?? 0) + by;
    if (count <= 0) perTarget.delete(key);
    else perTarget.set(key, count);
  }
  function startHeld(): void {
    for (const [key, waiting] of held) {
      while (waiting.length > 0 && !atCap(key) && slotWaiters.length === 0 && holding + reserved < concurrency) {
        heldCount -= 1;
        const delivery = waiting.shift()!;
        // Held so long that the attempt could not be sent within its lease: given up, due at once.
        if (now() > delivery.leaseExpiresAt - timeoutMs - LEASE_MARGIN_MS) release([delivery], 0);
        else startAttempt(delivery, key);
      }
      if (waiting.length === 0) held.delete(key);
    }
  }
  /** Starts the claimed deliveries whose target is below its cap (their slots reserved by the claim); holds the others aside or gives them up. */
  function admit(deliveries: ClaimedDelivery[]): void {
    const giveUp: ClaimedDelivery[] = [];
    for (const delivery of deliveries) {
      const key = targetKey(delivery.url);
      if (!atCap(key)) startAttempt(delivery, key);
      else if (heldCount < maxHeld) {
        heldCount += 1;
        const waiting = held.get(key);
        if (waiting) waiting.push(delivery);
        else held.set(key, [delivery]);
      } else giveUp.push(delivery);
    }
    release(giveUp, now() + TARGET_BUSY_DEFER_MS);
  }
  function release(deliveries: ClaimedDelivery[], notBefore: number): void {
    if (deliveries.length === 0) return;
    const releasing_ = store
      .releaseClaims(deliveries, notBefore)
      .then(
        () => undefined,
        // Still claimed: attempted again once the lease expires.
        (error: unknown) => logger.error('webhook claims not released', { workerId, deliveryIds: deliveries.map((d) => d.id), error }),
      )
      .finally(() => {
        releasing.delete(releasing_);
        settleIfIdle();
      });
    releasing.add(releasing_);
  }
  function releaseSlot(): void {
    holding -= 1;
    grantWaitingSlots();
  }
  function takeSlot(): Promise<void> {
    if (slotWaiters.length === 0 && holding + reserved < concurrency) {
      holding += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => slotWaiters.push(resolve));
  }
  /** The attempt's hooks: waiting for DNS, it holds neither a slot nor a place in its target's cap. */
  const hooksFor = (delivery: ClaimedDelivery, key: string) => ({
    async whileResolving<T>(resolution: Promise<T>): Promise<T> {
      if (resolving >= maxResolving) return resolution;
      resolving += 1;
      sendingSince(delivery, undefined);
      countTarget(key, -1);
      releaseSlot();
      wake();
      try {
        return await resolution;
      } finally {
        resolving -= 1;
        await takeSlot();
        // Back in its slot even when its target is at the cap meanwhile (by at most the attempts back from DNS).
        countTarget(key, 1);
        sendingSince(delivery, now());
      }
    },
  });

  function sendingSince(delivery: ClaimedDelivery, since: number | undefined): void {
    const attempt = counted.get(delivery);
    if (attempt) attempt.sendingSince = since;
  }

  async function attemptAndRecord(delivery: ClaimedDelivery, key: string): Promise<void> {
    const fields = attemptLogFields(workerId, delivery);
    const outcome = await attempt(delivery, fields, hooksFor(delivery, key));
    // How long it was sending (a wait for DNS not counted).
    const since = counted.get(delivery)?.sendingSince;
    if (since !== undefined && now() - since > SLOW_TARGET_MS) slowUntil.set(key, now() + SLOW_TARGET_MEMORY_MS);
    sendingSince(delivery, undefined);
    if (outcome !== undefined) await recorder.record(delivery, outcome, fields);
  }

  const inFlight = new Set<Promise<unknown>>();
  /** Slots promised to claims under way (their transactions await the database): counted as taken until they end. */
  let reserved = 0;
  /** Looks for due deliveries under way. */
  const looks = new Set<Promise<void>>();
  let running = false;
  let sweep: ScheduledTask | undefined;
  let wakeScheduled = false;
  let unsubscribe: (() => void) | undefined;
  let stopListening: (() => Promise<void>) | undefined;
  /** How many times stop() was called: a start() that a stop() overtook does not start. */
  let stops = 0;
  let commitPoll: NodeJS.Timeout | undefined;
  let idleWaiters: Array<() => void> = [];

  function isIdle(): boolean {
    return inFlight.size === 0 && !wakeScheduled && looks.size === 0 && reserved === 0 && heldCount === 0 && releasing.size === 0;
  }

  /**
   * Reserves the free slots (plus those of `recording` attempts, about to be free, less those
   * that attempts back from DNS wait for) for one claim, within the bound of attempts in flight
   * (slots plus `maxResolving`); 0 when stopped or full.
   */
  function reserveRoom(recording = 0): number {
    const slots = concurrency - holding - slotWaiters.length - reserved + recording;
    const attempts = concurrency + maxResolving - inFlight.size - reserved + recording;
    const room = running ? Math.max(0, Math.min(slots, attempts)) : 0;
    reserved += room;
    return room;
  }
  function settleIfIdle(): void {
    if (!isIdle() || idleWaiters.length === 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Wakes the worker whenever another connection has committed since the last look. */
  function pollOtherCommits(connection: BetterSqlite3.Database, intervalMs: number): NodeJS.Timeout {
    // Changes only with other connections' commits, this worker's own claims and records excluded.
    const dataVersion = connection.prepare('PRAGMA data_version').pluck();
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

  function pump(): Promise<void> {
    const look = claimWhileRoom().finally(() => {
      looks.delete(look);
      settleIfIdle();
    });
    looks.add(look);
    return look;
  }

  async function claimWhileRoom(): Promise<void> {
    for (let room = reserveRoom(); room > 0; room = reserveRoom()) {
      let batch: ClaimedDelivery[];
      try {
        batch = await store.claimDue(workerId, room, skipSubscriptions());
      } catch (error) {
        // SQLITE_BUSY beyond the busy timeout, a closed database…: try again at the next sweep or wake-up.
        logger.error('webhook claim failed', { workerId, error });
        return;
      } finally {
        reserved -= room;
        grantWaitingSlots();
      }
      // Claimed, so attempted (or held, or given up) even when the worker was stopped meanwhile (stop waits for it).
      admit(batch);
      if (batch.length === 0) return;
    }
  }

  function startAttempt(delivery: ClaimedDelivery, key: string): void {
    holding += 1;
    countTarget(key, 1);
    counted.set(delivery, { key, sendingSince: now() });
    const task = attemptAndRecord(delivery, key)
      .catch((error: unknown) => logger.error('webhook attempt failed unexpectedly', { workerId, deliveryId: delivery.id, error }))
      .finally(() => {
        inFlight.delete(task);
        counted.delete(delivery);
        countTarget(key, -1);
        releaseSlot();
        // Not pump(): the attempts ending in this turn make room together, filled by one claim.
        wake();
        // A stopped worker is not woken: its last attempt ending makes it idle.
        settleIfIdle();
      });
    inFlight.add(task);
  }

  function wake(): void {
    if (!running || wakeScheduled) return;
    wakeScheduled = true;
    setImmediate(() => {
      wakeScheduled = false;
      void pump();
    });
  }

  return {
    workerId,
    store,

    async start() {
      if (running) return;
      const stopsBefore = stops;
      await assertWebhookSecretKeyOpensSecrets(store, secretBox);
      // Other processes' deliveries: on PostgreSQL their commits NOTIFY, on SQLite PRAGMA data_version
      // tells (an engine given without its SQLite connection finds them at the next retry sweep).
      // Listening before running: from here on start() does not wait, so stop() cannot come between.
      const listening = await onDeliveriesQueuedAnywhere(options.db, wake);
      // Started meanwhile, or stopped while starting: this start does nothing.
      if (running || stops !== stopsBefore) {
        await listening();
        return;
      }
      running = true;
      stopListening = listening;
      unsubscribe = onDeliveriesQueued(options.db, wake);
      if (retrySweep !== false) sweep = schedule(retrySweep, pump, { name: 'webhook-retry-sweep', noOverlap: true });
      if (commitPollMs !== false && !isEngine(options.db)) commitPoll = pollOtherCommits(options.db, commitPollMs);
      logger.info('webhook worker started', { workerId, concurrency, retrySweep, commitPollMs, timeoutMs });
      void pump();
    },

    async stop() {
      stops += 1;
      if (!running) return;
      running = false;
      clearInterval(commitPoll);
      commitPoll = undefined;
      await sweep?.destroy();
      sweep = undefined;
      unsubscribe?.();
      await stopListening?.();
      stopListening = undefined;
      // A claim under way (a look, or the recording of ended attempts) starts its attempts when it ends: wait for those too.
      // Deliveries held aside for a busy target are given up, due at once for any worker.
      const giveUpHeld = () => {
        const waiting = [...held.values()].flat();
        held.clear();
        heldCount = 0;
        release(waiting, 0);
      };
      giveUpHeld();
      while (looks.size > 0 || inFlight.size > 0 || releasing.size > 0) {
        await Promise.allSettled([...looks, ...inFlight, ...releasing]);
        giveUpHeld();
      }
      agents.destroy();
      logger.info('webhook worker stopped', { workerId });
    },

    wake,

    idle() {
      if (isIdle()) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
  };
}
