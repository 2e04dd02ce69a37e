// Webhook deliveries as data: a worker claims due PENDING rows with a lease, sends, and records
// the attempt and its outcome in one transaction guarded by the lease, so any number of workers
// on one database never record one attempt twice, and a dead worker's claim is taken over once
// its lease has expired. Nothing about a delivery lives in memory between attempts.
import type BetterSqlite3 from 'better-sqlite3';
import { and, asc, eq, inArray, isNotNull, isNull, lt, lte, or, sql } from 'drizzle-orm';
import { events, webhookAttempts, webhookDeliveries, webhookSubscriptions, type WebhookDeliveryStatus, type WebhookDisabledCode } from '../../db/schema.js';
import type { SecretBox } from '../webhooks/secretBox.js';
import { nextAttemptAt } from '../webhooks/retrySchedule.js';
import { runInImmediateTransaction } from './database.js';
import { drizzleFor } from './drizzle.js';
import { effectiveLimits } from '../limits/workspaceLimits.js';
import { createWorkspaceStore } from './workspaces.js';

/** How long a claim is exclusive: far longer than one attempt (10 s, lookup included, sent only while 15 s of the lease remain), short enough to take over a dead worker's claims soon. */
export const DELIVERY_LEASE_MS = 60_000;
/** Ended deliveries (and their attempts) are kept this long after they end; events this long after they occur. */
export const WEBHOOK_LOG_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
/** Events in a row that fail for the whole schedule before the subscription is disabled (`FAILING`); replays are not counted. */
export const FAILING_AFTER_CONSECUTIVE_EVENTS = 3;
/** Rows deleted per statement by the purges, so that no purge holds the write lock for long. */
const PURGE_BATCH = 1000;

/** The attempt error codes of the contract's WebhookDeliveryAttempt. */
export const attemptErrorCodes = ['timeout', 'connection-failed', 'dns-failure', 'forbidden-address', 'tls-failure'] as const;
export type AttemptErrorCode = (typeof attemptErrorCodes)[number];

export interface AttemptError {
  code: AttemptErrorCode;
  /** Human-readable; never holds a secret, a signature or the URL's path or query. */
  message: string;
}

/** A claimed delivery with everything its attempt needs. */
export interface ClaimedDelivery {
  id: string;
  subscriptionId: string;
  workspaceId: string;
  eventId: string;
  eventType: string;
  replay: boolean;
  /** Attempts recorded so far; this attempt is number `attemptCount + 1`. */
  attemptCount: number;
  /** The exact delivery body (events.payload). */
  payload: string;
  url: string;
  /** Opened signing secrets, current first; the previous one while its overlap lasts. Empty when `secretProblem` is set. */
  secrets: string[];
  /** Set when a sealed secret did not open (wrong WEBHOOK_SECRET_KEY): the attempt cannot be signed. */
  secretProblem?: string;
  /**
   * The claim's own token, `<owner>.<random>`, fresh at every claim and written to `lease_owner`:
   * only this claim may record its attempt, so neither another worker nor the same worker
   * re-claiming the row after the lease expired can record over it.
   */
  leaseToken: string;
  leaseExpiresAt: number;
}

export interface AttemptOutcome {
  /** When the attempt started, milliseconds since the epoch. */
  attemptedAt: number;
  durationMs: number;
  /** The subscriber's status; null when no answer arrived (see `error`). */
  statusCode: number | null;
  error: AttemptError | null;
  /** The answer's `Retry-After` header, if any (honoured on 429 and 503). */
  retryAfter?: string | null;
}

export interface RecordedAttempt {
  number: number;
  succeeded: boolean;
  /** The delivery's status after this attempt. */
  status: WebhookDeliveryStatus;
  nextAttemptAt: number | null;
  /** Set when this attempt disabled the subscription. */
  disabled?: WebhookDisabledCode;
}

export interface AttemptToRecord {
  claimed: Pick<ClaimedDelivery, 'id' | 'attemptCount' | 'leaseToken'>;
  outcome: AttemptOutcome;
  /** A random number in [0, 1): the retry jitter. */
  jitter: number;
}

export type RecordingResult = { recorded: RecordedAttempt } | { lost: true } | { error: unknown };

export interface WebhookDeliveryStoreOptions {
  secretBox: SecretBox;
  now?: () => number;
}

export interface WebhookDeliveryStore {
  /**
   * Claims up to `limit` due deliveries for `owner` (BEGIN IMMEDIATE): PENDING, due, and not
   * leased or leased with an expired lease. Each claim gets a fresh `leaseToken` (`<owner>.<random>`). Due deliveries of DISABLED subscriptions are
   * CANCELLED in the same transaction instead of being claimed.
   */
  claimDue(owner: string, limit: number): ClaimedDelivery[];
  /**
   * Records attempts of claimed deliveries and their outcomes in one transaction (BEGIN
   * IMMEDIATE), each in a savepoint of its own: the answers are in the order given, one per
   * attempt. An attempt is written only while its claim's `leaseToken` still holds the row; one
   * whose claim was lost (claimed again after the lease expired, or ended meanwhile) answers
   * `{ lost: true }`, one whose statements failed `{ error }` (its
   * savepoint rolled back, nothing of it written, its claim left to expire); the others are
   * written. Throws, with nothing written, when the transaction itself fails (the write lock not
   * obtained within the busy timeout, the commit failed).
   */
  recordAttempts(attempts: readonly AttemptToRecord[]): RecordingResult[];
  /**
   * Opens one stored sealed secret (the oldest subscription's): undefined when it opens or no
   * subscription exists, else the subscription and the problem. A worker whose WEBHOOK_SECRET_KEY
   * is not the one the secrets were sealed with could sign nothing.
   */
  sealedSecretProblem(): { subscriptionId: string; problem: string } | undefined;
  /** Forgets every previous secret whose overlap has ended. Returns how many subscriptions changed. */
  endExpiredRotationOverlaps(): number;
  /** Deletes deliveries (with their attempts) that ended before `before`. Returns how many. */
  purgeEndedDeliveries(before: number): number;
  /** Deletes events that occurred before `before` and have no delivery still PENDING or ended since `before`. */
  purgeEvents(before: number): number;
}

const isSuccess = (outcome: AttemptOutcome) => outcome.error === null && outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode <= 299;

export function describeOutcome(outcome: Pick<AttemptOutcome, 'statusCode' | 'error'>): string {
  if (outcome.error) return `${outcome.error.code}: ${outcome.error.message}`;
  return `HTTP ${outcome.statusCode}`;
}

export function createWebhookDeliveryStore(db: BetterSqlite3.Database, options: WebhookDeliveryStoreOptions): WebhookDeliveryStore {
  const now = options.now ?? Date.now;
  const { secretBox } = options;
  const orm = drizzleFor(db);
  const workspaces = createWorkspaceStore(db, { now });

  const claimable = (at: ReturnType<typeof sql.placeholder>) =>
    and(
      eq(webhookDeliveries.status, 'PENDING'),
      lte(webhookDeliveries.nextAttemptAt, at),
      or(isNull(webhookDeliveries.leaseExpiresAt), lte(webhookDeliveries.leaseExpiresAt, at)),
    );
  const ended = (at: ReturnType<typeof sql.placeholder>) => ({
    nextAttemptAt: null,
    leaseOwner: null,
    leaseExpiresAt: null,
    completedAt: sql`${at}`,
  });

  const cancelDueOfDisabled = orm
    .update(webhookDeliveries)
    .set({ status: 'CANCELLED', ...ended(sql.placeholder('now')) })
    .where(
      and(
        claimable(sql.placeholder('now')),
        inArray(
          webhookDeliveries.subscriptionId,
          orm.select({ id: webhookSubscriptions.id }).from(webhookSubscriptions).where(eq(webhookSubscriptions.status, 'DISABLED')),
        ),
      ),
    )
    .prepare();
  const lease = orm
    .update(webhookDeliveries)
    // A token per claimed row: randomblob() is evaluated for each row.
    .set({
      leaseOwner: sql`${sql.placeholder('owner')} || '.' || lower(hex(randomblob(8)))`,
      leaseExpiresAt: sql`${sql.placeholder('leaseExpiresAt')}`,
    })
    .where(
      inArray(
        webhookDeliveries.id,
        orm
          .select({ id: webhookDeliveries.id })
          .from(webhookDeliveries)
          .where(claimable(sql.placeholder('now')))
          .orderBy(asc(webhookDeliveries.nextAttemptAt), sql`rowid`)
          .limit(sql.placeholder('limit')),
      ),
    )
    .returning({ id: webhookDeliveries.id, leaseToken: webhookDeliveries.leaseOwner })
    .prepare();
  const anyClaimable = orm
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(claimable(sql.placeholder('now')))
    .limit(1)
    .prepare();
  const claimedDetails = orm
    .select({
      id: webhookDeliveries.id,
      subscriptionId: webhookDeliveries.subscriptionId,
      workspaceId: webhookDeliveries.workspaceId,
      eventId: webhookDeliveries.eventId,
      eventType: webhookDeliveries.eventType,
      replay: webhookDeliveries.replay,
      attemptCount: webhookDeliveries.attemptCount,
      leaseExpiresAt: webhookDeliveries.leaseExpiresAt,
      payload: events.payload,
      url: webhookSubscriptions.url,
      sealedSecret: webhookSubscriptions.sealedSecret,
      sealedPreviousSecret: webhookSubscriptions.sealedPreviousSecret,
      previousSecretExpiresAt: webhookSubscriptions.previousSecretExpiresAt,
    })
    .from(webhookDeliveries)
    .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
    .innerJoin(webhookSubscriptions, eq(webhookSubscriptions.id, webhookDeliveries.subscriptionId))
    .where(eq(webhookDeliveries.id, sql.placeholder('id')))
    .prepare();

  const heldDelivery = orm
    .select({
      subscriptionId: webhookDeliveries.subscriptionId,
      workspaceId: webhookDeliveries.workspaceId,
      attemptCount: webhookDeliveries.attemptCount,
      replay: webhookDeliveries.replay,
      subscriptionStatus: webhookSubscriptions.status,
      consecutiveFailedEvents: webhookSubscriptions.consecutiveFailedEvents,
    })
    .from(webhookDeliveries)
    .innerJoin(webhookSubscriptions, eq(webhookSubscriptions.id, webhookDeliveries.subscriptionId))
    .where(
      and(
        eq(webhookDeliveries.id, sql.placeholder('id')),
        eq(webhookDeliveries.status, 'PENDING'),
        eq(webhookDeliveries.leaseOwner, sql.placeholder('owner')),
        eq(webhookDeliveries.attemptCount, sql.placeholder('attemptCount')),
      ),
    )
    .prepare();
  const updateDelivery = orm
    .update(webhookDeliveries)
    .set({
      status: sql`${sql.placeholder('status')}`,
      attemptCount: sql`${sql.placeholder('attemptCount')}`,
      nextAttemptAt: sql`${sql.placeholder('nextAttemptAt')}`,
      completedAt: sql`${sql.placeholder('completedAt')}`,
      leaseOwner: null,
      leaseExpiresAt: null,
    })
    .where(eq(webhookDeliveries.id, sql.placeholder('id')))
    .prepare();
  const insertAttempt = orm
    .insert(webhookAttempts)
    .values({
      deliveryId: sql.placeholder('deliveryId'),
      number: sql.placeholder('number'),
      attemptedAt: sql.placeholder('attemptedAt'),
      durationMs: sql.placeholder('durationMs'),
      statusCode: sql.placeholder('statusCode'),
      errorCode: sql.placeholder('errorCode'),
      errorMessage: sql.placeholder('errorMessage'),
      succeeded: sql.placeholder('succeeded'),
      nextAttemptAt: sql.placeholder('nextAttemptAt'),
    })
    .prepare();
  const setConsecutiveFailedEvents = orm
    .update(webhookSubscriptions)
    .set({ consecutiveFailedEvents: sql`${sql.placeholder('count')}` })
    .where(eq(webhookSubscriptions.id, sql.placeholder('id')))
    .prepare();
  const disable = orm
    .update(webhookSubscriptions)
    .set({
      status: 'DISABLED',
      disabledCode: sql`${sql.placeholder('code')}`,
      disabledMessage: sql`${sql.placeholder('message')}`,
      disabledAt: sql`${sql.placeholder('now')}`,
      version: sql`${webhookSubscriptions.version} + 1`,
      updatedAt: sql`${sql.placeholder('now')}`,
    })
    .where(and(eq(webhookSubscriptions.id, sql.placeholder('id')), eq(webhookSubscriptions.status, 'ACTIVE')))
    .prepare();
  const cancelPending = orm
    .update(webhookDeliveries)
    .set({ status: 'CANCELLED', ...ended(sql.placeholder('now')) })
    .where(and(eq(webhookDeliveries.subscriptionId, sql.placeholder('subscriptionId')), eq(webhookDeliveries.status, 'PENDING')))
    .prepare();
  const oldestSealedSecret = orm
    .select({ id: webhookSubscriptions.id, sealedSecret: webhookSubscriptions.sealedSecret })
    .from(webhookSubscriptions)
    .orderBy(asc(webhookSubscriptions.createdAt), asc(webhookSubscriptions.id))
    .limit(1)
    .prepare();
  const endOverlaps = orm
    .update(webhookSubscriptions)
    .set({ sealedPreviousSecret: null, previousSecretExpiresAt: null })
    .where(lte(webhookSubscriptions.previousSecretExpiresAt, sql.placeholder('now')))
    .prepare();
  const purgeDeliveriesBatch = orm
    .delete(webhookDeliveries)
    .where(
      inArray(
        webhookDeliveries.id,
        orm
          .select({ id: webhookDeliveries.id })
          .from(webhookDeliveries)
          .where(and(isNotNull(webhookDeliveries.completedAt), lt(webhookDeliveries.completedAt, sql.placeholder('before'))))
          .limit(PURGE_BATCH),
      ),
    )
    .prepare();
  const purgeEventsBatch = orm
    .delete(events)
    .where(
      inArray(
        events.id,
        orm
          .select({ id: events.id })
          .from(events)
          .where(
            and(
              lt(events.occurredAt, sql.placeholder('before')),
              sql`not exists (select 1 from ${webhookDeliveries} where ${webhookDeliveries.eventId} = ${events.id}
                and (${webhookDeliveries.status} = 'PENDING' or ${webhookDeliveries.completedAt} >= ${sql.placeholder('before')}))`,
            ),
          )
          .limit(PURGE_BATCH),
      ),
    )
    .prepare();


  // Opened for the attempt that claims the delivery and never kept: a signing secret lives in
  // memory only while its delivery is being signed (AES-GCM under an already derived key: microseconds).
  function openSecret(sealed: string, subscriptionId: string): string {
    return secretBox.open(sealed, subscriptionId);
  }

  function openSecrets(row: { subscriptionId: string; sealedSecret: string; sealedPreviousSecret: string | null; previousSecretExpiresAt: number | null }, at: number) {
    try {
      const secrets = [openSecret(row.sealedSecret, row.subscriptionId)];
      if (row.sealedPreviousSecret !== null && row.previousSecretExpiresAt !== null && row.previousSecretExpiresAt > at) {
        secrets.push(openSecret(row.sealedPreviousSecret, row.subscriptionId));
      }
      return { secrets };
    } catch (error) {
      return { secrets: [], secretProblem: error instanceof Error ? error.message : String(error) };
    }
  }

  function disableSubscription(subscriptionId: string, code: WebhookDisabledCode, message: string, at: number): boolean {
    const changed = disable.run({ id: subscriptionId, code, message, now: at }).changes > 0;
    if (changed) cancelPending.run({ subscriptionId, now: at });
    return changed;
  }

  /** One attempt's rows; undefined when the claim no longer holds the delivery. Runs inside the batch's transaction only. */
  function recordOne(claimed: AttemptToRecord['claimed'], outcome: AttemptOutcome, jitter: number): RecordedAttempt | undefined {
    const held = heldDelivery.get({ id: claimed.id, owner: claimed.leaseToken, attemptCount: claimed.attemptCount });
    if (!held) return undefined;
    const at = now();
    const number = held.attemptCount + 1;
    const succeeded = isSuccess(outcome);
    let status: WebhookDeliveryStatus;
    let next: number | null = null;
    let disabled: WebhookDisabledCode | undefined;

    if (succeeded) {
      status = 'SUCCEEDED';
      // A success resets the count, a replay's too: the subscriber answers again.
      if (held.consecutiveFailedEvents !== 0) setConsecutiveFailedEvents.run({ id: held.subscriptionId, count: 0 });
    } else if (outcome.statusCode === 410) {
      status = 'FAILED';
    } else {
      const workspace = workspaces.getWorkspace(held.workspaceId);
      const delaysSeconds = workspace ? effectiveLimits(workspace).webhookRetryDelaysSeconds.inForce : [];
      next = nextAttemptAt({
        delaysSeconds,
        failedAttemptNumber: number,
        nowMs: at,
        jitter,
        statusCode: outcome.statusCode,
        retryAfter: outcome.retryAfter ?? null,
      });
      status = next === null ? 'FAILED' : 'PENDING';
    }

    updateDelivery.run({ id: claimed.id, status, attemptCount: number, nextAttemptAt: next, completedAt: status === 'PENDING' ? null : at });
    insertAttempt.run({
      deliveryId: claimed.id,
      number,
      attemptedAt: outcome.attemptedAt,
      durationMs: Math.max(0, Math.round(outcome.durationMs)),
      statusCode: outcome.statusCode,
      errorCode: outcome.error?.code ?? null,
      errorMessage: outcome.error?.message ?? null,
      succeeded: succeeded ? 1 : 0,
      nextAttemptAt: next,
    });

    if (outcome.statusCode === 410) {
      const message = `The subscriber answered 410 Gone to delivery ${claimed.id} at ${new Date(at).toISOString()}.`;
      if (disableSubscription(held.subscriptionId, 'GONE', message, at)) disabled = 'GONE';
    } else if (status === 'FAILED' && !held.replay) {
      // Replays are not counted: replaying one event to a flaky receiver must not disable it.
      const failedInARow = held.consecutiveFailedEvents + 1;
      setConsecutiveFailedEvents.run({ id: held.subscriptionId, count: failedInARow });
      if (failedInARow >= FAILING_AFTER_CONSECUTIVE_EVENTS) {
        const message =
          `${failedInARow} events in a row failed for the whole retry schedule; the last, delivery ${claimed.id}, ` +
          `ended with ${describeOutcome(outcome)} at ${new Date(at).toISOString()}.`;
        if (disableSubscription(held.subscriptionId, 'FAILING', message, at)) disabled = 'FAILING';
      }
    }
    return { number, succeeded, status, nextAttemptAt: next, ...(disabled ? { disabled } : {}) };
  }
  // Inside the batch's transaction this is a savepoint: a failing attempt takes back its own rows only.
  const recordInSavepoint = db.transaction(recordOne);

  function recordAttempts(attempts: readonly AttemptToRecord[]): RecordingResult[] {
    if (attempts.length === 0) return [];
    return runInImmediateTransaction(db, () =>
      attempts.map(({ claimed, outcome, jitter }): RecordingResult => {
        try {
          const recorded = recordInSavepoint(claimed, outcome, jitter);
          return recorded ? { recorded } : { lost: true };
        } catch (error) {
          // SQLite rolls the whole transaction back on some errors (a full disk…): then nothing
          // of this batch may be written, the attempts before this one included.
          if (!db.inTransaction) throw error;
          return { error };
        }
      }),
    );
  }

  function purgeInBatches(statement: { run(values: { before: number }): { changes: number } }, before: number): number {
    let removed = 0;
    for (;;) {
      const { changes } = statement.run({ before });
      removed += changes;
      if (changes < PURGE_BATCH) return removed;
    }
  }

  return {
    claimDue(owner, limit) {
      if (!Number.isInteger(limit) || limit < 1) return [];
      const at = now();
      const leaseExpiresAt = at + DELIVERY_LEASE_MS;
      // Read first: a worker woken by every commit of other processes takes the write lock only when there is something to claim.
      if (anyClaimable.get({ now: at }) === undefined) return [];
      return runInImmediateTransaction(db, () => {
        cancelDueOfDisabled.run({ now: at });
        const claimed = lease.all({ owner, leaseExpiresAt, now: at, limit });
        return claimed.map(({ id, leaseToken }) => {
          const row = claimedDetails.get({ id })!;
          return {
            id: row.id,
            subscriptionId: row.subscriptionId,
            workspaceId: row.workspaceId,
            eventId: row.eventId,
            eventType: row.eventType,
            replay: row.replay,
            attemptCount: row.attemptCount,
            payload: row.payload,
            url: row.url,
            leaseToken: leaseToken!,
            leaseExpiresAt: row.leaseExpiresAt!,
            ...openSecrets(row, at),
          };
        });
      });
    },

    recordAttempts,

    sealedSecretProblem() {
      const row = oldestSealedSecret.get();
      if (!row) return undefined;
      try {
        secretBox.open(row.sealedSecret, row.id);
        return undefined;
      } catch (error) {
        return { subscriptionId: row.id, problem: error instanceof Error ? error.message : String(error) };
      }
    },

    endExpiredRotationOverlaps() {
      return endOverlaps.run({ now: now() }).changes;
    },

    purgeEndedDeliveries(before) {
      return purgeInBatches(purgeDeliveriesBatch, before);
    },

    purgeEvents(before) {
      return purgeInBatches(purgeEventsBatch, before);
    },
  };
}
