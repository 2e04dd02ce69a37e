// Webhook deliveries as data: a worker claims due PENDING rows with a lease, sends, and records
// the attempt and its outcome in one transaction guarded by the lease, so any number of workers
// on one database never record one attempt twice, and a dead worker's claim is taken over once
// its lease has expired. Nothing about a delivery lives in memory between attempts. On
// PostgreSQL the claim locks the rows it takes and skips those another worker's claim holds
// (FOR UPDATE SKIP LOCKED), so workers on several hosts claim different deliveries at once.
import type { components } from '../../generated/work-platform/types.js';
import { and, asc, eq, gte, inArray, isNotNull, isNull, lt, lte, not, notExists, or, sql } from 'drizzle-orm';
import { events, webhookAttempts, webhookDeliveries, webhookSubscriptions, type WebhookDeliveryStatus, type WebhookDisabledCode } from '../../db/schema.js';
import { engineOf, type StoreSource } from './engine.js';

/** How long a claim is exclusive: far longer than one attempt (10 s, lookup included, sent only while 15 s of the lease remain), short enough to take over a dead worker's claims soon. */
export const DELIVERY_LEASE_MS = 60_000;
/** Ended deliveries (and their attempts) are kept this long after they end; events this long after they occur. */
export const WEBHOOK_LOG_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
/** Events in a row that fail for the whole schedule before the subscription is disabled (`FAILING`); replays are not counted. */
export const FAILING_AFTER_CONSECUTIVE_EVENTS = 3;
/** Rows deleted per statement by the purges, so that no purge holds the write lock for long. */
const PURGE_BATCH = 1000;

/**
 * Why an attempt got no status: the contract's WebhookDeliveryAttempt `error`. The message is
 * human-readable and never holds a secret, a signature or the URL's path or query.
 */
export type AttemptError = NonNullable<components['schemas']['WebhookDeliveryAttempt']['error']>;

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
  /**
   * The signing secrets as stored (sealed, bound to the subscription id), current first; the
   * previous one while its overlap lasts at the claim.
   */
  sealedSecrets: string[];
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
  /**
   * When an attempt that did not succeed is followed by another, milliseconds since the epoch;
   * null when the retry schedule is spent (and for a success). Not read for a 410.
   */
  retryAt: number | null;
}

export type RecordingResult = { recorded: RecordedAttempt } | { lost: true } | { error: unknown };

export interface WebhookDeliveryStoreOptions {
  now?: () => number;
  /** How long a claim lasts (DELIVERY_LEASE_MS by default; WEBHOOK_DELIVERY_LEASE_SECONDS). */
  leaseMs?: number;
}

export interface WebhookDeliveryStore {
  /**
   * Claims up to `limit` due deliveries for `owner` (engine.autocommit; inside a write, in it):
   * PENDING, due, and not leased or leased with an expired lease, the longest due first; on
   * PostgreSQL none that another claim has locked (FOR UPDATE SKIP LOCKED). Each claim gets a fresh
   * `leaseToken` (`<owner>.<random>`). Due deliveries of DISABLED subscriptions are CANCELLED
   * instead of being claimed. None of the subscriptions in `skipSubscriptions` is claimed (their
   * target is at the worker's cap): they stay due for a later claim.
   */
  claimDue(owner: string, limit: number, skipSubscriptions?: readonly string[]): Promise<ClaimedDelivery[]>;
  /**
   * Records attempts of claimed deliveries and their outcomes in one write transaction, each in a
   * savepoint of its own: the answers are in the order given, one per
   * attempt. An attempt is written only while its claim's `leaseToken` still holds the row; one
   * whose claim was lost (claimed again after the lease expired, or ended meanwhile) answers
   * `{ lost: true }`, one whose statements failed `{ error }` (its
   * savepoint rolled back, nothing of it written, its claim left to expire); the others are
   * written. Throws, with nothing written, when the transaction itself fails (the write lock not
   * obtained within the busy timeout, the commit failed, SQLite rolled it back).
   */
  recordAttempts(attempts: readonly AttemptToRecord[]): Promise<RecordingResult[]>;
  /**
   * Gives claims up without an attempt (the worker had no room for them): each row still held by
   * its claim's `leaseToken` loses its lease and is due again at `notBefore` (or at its own next
   * attempt time when later); no attempt is counted. Answers how many were released.
   */
  releaseClaims(claims: readonly Pick<ClaimedDelivery, 'id' | 'leaseToken'>[], notBefore: number): Promise<number>;
  /** The oldest subscription's sealed current secret; undefined when no subscription exists. */
  oldestSealedSecret(): Promise<{ subscriptionId: string; sealedSecret: string } | undefined>;
  /** Forgets every previous secret whose overlap has ended. Returns how many subscriptions changed. */
  endExpiredRotationOverlaps(): Promise<number>;
  /** Deletes deliveries (with their attempts) that ended before `before`. Returns how many. */
  purgeEndedDeliveries(before: number): Promise<number>;
  /** Deletes events that occurred before `before` and have no delivery still PENDING or ended since `before`. */
  purgeEvents(before: number): Promise<number>;
}

const overlapLasts = (row: { sealedPreviousSecret: string | null; previousSecretExpiresAt: number | null }, at: number) =>
  row.sealedPreviousSecret !== null && row.previousSecretExpiresAt !== null && row.previousSecretExpiresAt > at;

/** A 2xx answer: the delivery has SUCCEEDED. */
export const attemptSucceeded = (outcome: Pick<AttemptOutcome, 'statusCode' | 'error'>): boolean =>
  outcome.error === null && outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode <= 299;

export function describeOutcome(outcome: Pick<AttemptOutcome, 'statusCode' | 'error'>): string {
  if (outcome.error) return `${outcome.error.code}: ${outcome.error.message}`;
  return `HTTP ${outcome.statusCode}`;
}

/**
 * Whether an error inside an attempt's savepoint ended more than the savepoint: SQLite rolls the
 * whole transaction back itself on a full disk, an I/O error, lack of memory, an interrupt or a
 * busy lock, and PostgreSQL's serialization failure or deadlock means the transaction must run
 * again from the start. Then nothing of the batch may be written, the attempts before it included.
 */
function endsTheTransaction(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return /^SQLITE_(FULL|IOERR|NOMEM|INTERRUPT|BUSY)/.test(code) || code === '40001' || code === '40P01';
}

type ClaimedDetails = Omit<ClaimedDelivery, 'sealedSecrets' | 'leaseToken' | 'leaseExpiresAt'> & {
  nextAttemptAt: number;
  createdAt: number;
  leaseExpiresAt: number | null;
  sealedSecret: string;
  sealedPreviousSecret: string | null;
  previousSecretExpiresAt: number | null;
};

export function createWebhookDeliveryStore(source: StoreSource, options: WebhookDeliveryStoreOptions): WebhookDeliveryStore {
  const now = options.now ?? Date.now;
  const leaseMs = options.leaseMs ?? DELIVERY_LEASE_MS;
  const engine = engineOf(source);
  const { orm, dialect } = engine;

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

  const cancelDueOfDisabled = engine.statement(
    orm
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
      ),
  );
  const dueToClaim = orm
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(and(claimable(sql.placeholder('now')), not(dialect.inJsonArray(webhookDeliveries.subscriptionId, sql.placeholder('skip')))))
    .orderBy(asc(webhookDeliveries.nextAttemptAt), asc(webhookDeliveries.createdAt), asc(webhookDeliveries.id))
    .limit(sql.placeholder('limit'));
  const lease = engine.statement<{ id: string; leaseToken: string | null }, { owner: string; leaseExpiresAt: number; now: number; limit: number; skip: string }>(
    orm
      .update(webhookDeliveries)
      // A token per claimed row: the random digits are drawn for each row.
      .set({
        leaseOwner: sql`cast(${sql.placeholder('owner')} as text) || '.' || ${dialect.randomHex16()}`,
        leaseExpiresAt: sql`${sql.placeholder('leaseExpiresAt')}`,
      })
      .where(sql`${webhookDeliveries.id} in (${dueToClaim.getSQL()} ${dialect.skipLockedRows()})`)
      .returning({ id: webhookDeliveries.id, leaseToken: webhookDeliveries.leaseOwner }),
  );
  const anyClaimable = engine.statement<unknown, { now: number; skip: string }>(
    orm
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(and(claimable(sql.placeholder('now')), not(dialect.inJsonArray(webhookDeliveries.subscriptionId, sql.placeholder('skip')))))
      .limit(1),
  );
  const claimedDetails = engine.statement<ClaimedDetails, { ids: string }>(
    orm
      .select({
        id: webhookDeliveries.id,
        subscriptionId: webhookDeliveries.subscriptionId,
        workspaceId: webhookDeliveries.workspaceId,
        eventId: webhookDeliveries.eventId,
        eventType: webhookDeliveries.eventType,
        replay: webhookDeliveries.replay,
        attemptCount: webhookDeliveries.attemptCount,
        nextAttemptAt: webhookDeliveries.nextAttemptAt,
        createdAt: webhookDeliveries.createdAt,
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
      .where(dialect.inJsonArray(webhookDeliveries.id, sql.placeholder('ids'))),
  );

  type HeldDelivery = { subscriptionId: string; attemptCount: number; replay: boolean; subscriptionStatus: string; consecutiveFailedEvents: number };
  const heldDelivery = engine.statement<HeldDelivery, { id: string; owner: string; attemptCount: number }>(
    orm
      .select({
        subscriptionId: webhookDeliveries.subscriptionId,
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
      ),
  );
  const updateDelivery = engine.statement(
    orm
      .update(webhookDeliveries)
      .set({
        status: sql`${sql.placeholder('status')}`,
        attemptCount: sql`${sql.placeholder('attemptCount')}`,
        nextAttemptAt: sql`${sql.placeholder('nextAttemptAt')}`,
        completedAt: sql`${sql.placeholder('completedAt')}`,
        leaseOwner: null,
        leaseExpiresAt: null,
      })
      .where(eq(webhookDeliveries.id, sql.placeholder('id'))),
  );
  const insertAttempt = engine.statement(
    orm.insert(webhookAttempts).values({
      deliveryId: sql.placeholder('deliveryId'),
      number: sql.placeholder('number'),
      attemptedAt: sql.placeholder('attemptedAt'),
      durationMs: sql.placeholder('durationMs'),
      statusCode: sql.placeholder('statusCode'),
      errorCode: sql.placeholder('errorCode'),
      errorMessage: sql.placeholder('errorMessage'),
      succeeded: sql.placeholder('succeeded'),
      nextAttemptAt: sql.placeholder('nextAttemptAt'),
    }),
  );
  const setConsecutiveFailedEvents = engine.statement(
    orm
      .update(webhookSubscriptions)
      .set({ consecutiveFailedEvents: sql`${sql.placeholder('count')}` })
      .where(eq(webhookSubscriptions.id, sql.placeholder('id'))),
  );
  const disable = engine.statement(
    orm
      .update(webhookSubscriptions)
      .set({
        status: 'DISABLED',
        disabledCode: sql`${sql.placeholder('code')}`,
        disabledMessage: sql`${sql.placeholder('message')}`,
        disabledAt: sql`${sql.placeholder('now')}`,
        version: sql`${webhookSubscriptions.version} + 1`,
        updatedAt: sql`${sql.placeholder('now')}`,
      })
      .where(and(eq(webhookSubscriptions.id, sql.placeholder('id')), eq(webhookSubscriptions.status, 'ACTIVE'))),
  );
  const cancelPending = engine.statement(
    orm
      .update(webhookDeliveries)
      .set({ status: 'CANCELLED', ...ended(sql.placeholder('now')) })
      .where(and(eq(webhookDeliveries.subscriptionId, sql.placeholder('subscriptionId')), eq(webhookDeliveries.status, 'PENDING'))),
  );
  const oldestSealedSecret = engine.statement<{ id: string; sealedSecret: string }, Record<string, never>>(
    orm
      .select({ id: webhookSubscriptions.id, sealedSecret: webhookSubscriptions.sealedSecret })
      .from(webhookSubscriptions)
      .orderBy(asc(webhookSubscriptions.createdAt), asc(webhookSubscriptions.id))
      .limit(1),
  );
  const endOverlaps = engine.statement<unknown, { now: number }>(
    orm
      .update(webhookSubscriptions)
      .set({ sealedPreviousSecret: null, previousSecretExpiresAt: null })
      .where(lte(webhookSubscriptions.previousSecretExpiresAt, sql.placeholder('now'))),
  );
  const purgeDeliveriesBatch = engine.statement<unknown, { before: number }>(
    orm.delete(webhookDeliveries).where(
      inArray(
        webhookDeliveries.id,
        orm
          .select({ id: webhookDeliveries.id })
          .from(webhookDeliveries)
          .where(and(isNotNull(webhookDeliveries.completedAt), lt(webhookDeliveries.completedAt, sql.placeholder('before'))))
          .limit(PURGE_BATCH),
      ),
    ),
  );
  const purgeEventsBatch = engine.statement<unknown, { before: number }>(
    orm.delete(events).where(
      inArray(
        events.id,
        orm
          .select({ id: events.id })
          .from(events)
          .where(
            and(
              lt(events.occurredAt, sql.placeholder('before')),
              notExists(
                orm
                  .select({ one: sql`1` })
                  .from(webhookDeliveries)
                  .where(
                    and(
                      eq(webhookDeliveries.eventId, events.id),
                      or(eq(webhookDeliveries.status, 'PENDING'), gte(webhookDeliveries.completedAt, sql.placeholder('before'))),
                    ),
                  ),
              ),
            ),
          )
          .limit(PURGE_BATCH),
      ),
    ),
  );

  async function disableSubscription(subscriptionId: string, code: WebhookDisabledCode, message: string, at: number): Promise<boolean> {
    const changed = (await disable.run({ id: subscriptionId, code, message, now: at })) > 0;
    if (changed) await cancelPending.run({ subscriptionId, now: at });
    return changed;
  }

  /** One attempt's rows; undefined when the claim no longer holds the delivery. Runs inside the batch's transaction only. */
  async function recordOne({ claimed, outcome, retryAt }: AttemptToRecord): Promise<RecordedAttempt | undefined> {
    const held = await heldDelivery.object({ id: claimed.id, owner: claimed.leaseToken, attemptCount: claimed.attemptCount });
    if (!held) return undefined;
    const at = now();
    const number = held.attemptCount + 1;
    const succeeded = attemptSucceeded(outcome);
    let status: WebhookDeliveryStatus;
    let next: number | null = null;
    let disabled: WebhookDisabledCode | undefined;

    if (succeeded) {
      status = 'SUCCEEDED';
      // A success resets the count, a replay's too: the subscriber answers again.
      if (held.consecutiveFailedEvents !== 0) await setConsecutiveFailedEvents.run({ id: held.subscriptionId, count: 0 });
    } else if (outcome.statusCode === 410) {
      status = 'FAILED';
    } else {
      next = retryAt;
      status = next === null ? 'FAILED' : 'PENDING';
    }

    await updateDelivery.run({ id: claimed.id, status, attemptCount: number, nextAttemptAt: next, completedAt: status === 'PENDING' ? null : at });
    await insertAttempt.run({
      deliveryId: claimed.id,
      number,
      attemptedAt: outcome.attemptedAt,
      durationMs: Math.max(0, Math.round(outcome.durationMs)),
      statusCode: outcome.statusCode,
      errorCode: outcome.error?.code ?? null,
      errorMessage: outcome.error?.message ?? null,
      succeeded,
      nextAttemptAt: next,
    });

    if (outcome.statusCode === 410) {
      const message = `The subscriber answered 410 Gone to delivery ${claimed.id} at ${new Date(at).toISOString()}.`;
      if (await disableSubscription(held.subscriptionId, 'GONE', message, at)) disabled = 'GONE';
    } else if (status === 'FAILED' && !held.replay) {
      // Replays are not counted: replaying one event to a flaky receiver must not disable it.
      const failedInARow = held.consecutiveFailedEvents + 1;
      await setConsecutiveFailedEvents.run({ id: held.subscriptionId, count: failedInARow });
      if (failedInARow >= FAILING_AFTER_CONSECUTIVE_EVENTS) {
        const message =
          `${failedInARow} events in a row failed for the whole retry schedule; the last, delivery ${claimed.id}, ` +
          `ended with ${describeOutcome(outcome)} at ${new Date(at).toISOString()}.`;
        if (await disableSubscription(held.subscriptionId, 'FAILING', message, at)) disabled = 'FAILING';
      }
    }
    return { number, succeeded, status, nextAttemptAt: next, ...(disabled ? { disabled } : {}) };
  }

  function recordAttempts(attempts: readonly AttemptToRecord[]): Promise<RecordingResult[]> {
    if (attempts.length === 0) return Promise.resolve([]);
    return engine.write(async () => {
      const results: RecordingResult[] = [];
      for (const attempt of attempts) {
        try {
          // Nested in the batch's transaction, a savepoint: a failing attempt takes back its own rows only.
          const recorded = await engine.write(() => recordOne(attempt));
          results.push(recorded ? { recorded } : { lost: true });
        } catch (error) {
          if (endsTheTransaction(error)) throw error;
          results.push({ error });
        }
      }
      return results;
    });
  }

  /** Deletes in batches, each its own transaction, so that no purge holds the write lock for long. */
  async function purgeInBatches(statement: { run(values: { before: number }): Promise<number> }, before: number): Promise<number> {
    let removed = 0;
    for (;;) {
      const changes = await engine.write(() => statement.run({ before }));
      removed += changes;
      if (changes < PURGE_BATCH) return removed;
    }
  }

  const releaseClaim = engine.statement(
    orm
      .update(webhookDeliveries)
      .set({
        leaseOwner: null,
        leaseExpiresAt: null,
                // cast: PostgreSQL infers no type for a parameter in a CASE branch.
        nextAttemptAt: sql`case when ${webhookDeliveries.nextAttemptAt} < cast(${sql.placeholder('notBefore')} as bigint) then cast(${sql.placeholder('notBefore')} as bigint) else ${webhookDeliveries.nextAttemptAt} end`,
      })
      .where(
        and(
          eq(webhookDeliveries.id, sql.placeholder('id')),
          eq(webhookDeliveries.status, 'PENDING'),
          eq(webhookDeliveries.leaseOwner, sql.placeholder('owner')),
        ),
      ),
  );

  return {
    async releaseClaims(claims, notBefore) {
      if (claims.length === 0) return 0;
      return engine.write(async () => {
        let released = 0;
        for (const { id, leaseToken } of claims) released += await releaseClaim.run({ id, owner: leaseToken, notBefore });
        return released;
      });
    },

    async claimDue(owner, limit, skipSubscriptions = []) {
      if (!Number.isInteger(limit) || limit < 1) return [];
      const at = now();
      const leaseExpiresAt = at + leaseMs;
      // Read first: a worker woken by every commit of other processes takes the write lock only when there is something to claim.
      const skip = JSON.stringify(skipSubscriptions);
      if ((await engine.read(() => anyClaimable.row({ now: at, skip }))) === undefined) return [];
      // Each statement is atomic by itself. On PostgreSQL each commits apart at READ COMMITTED, so
      // that claims of several workers at once each take the rows the others have not locked (in
      // one SERIALIZABLE transaction all but one would fail, having read what the others changed);
      // the details are read once the rows are this claim's, and a delivery deleted meanwhile
      // (with its subscription) is left out. On SQLite it is one write transaction.
      return engine.autocommit(async () => {
        await cancelDueOfDisabled.run({ now: at });
        const claimed = await lease.objects({ owner, leaseExpiresAt, now: at, limit, skip });
        if (claimed.length === 0) return [];
        const tokens = new Map(claimed.map(({ id, leaseToken }) => [id, leaseToken!]));
        const rows = await claimedDetails.objects({ ids: JSON.stringify([...tokens.keys()]) });
        // In the order they were chosen (an update answers its rows in no particular order).
        rows.sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
        return rows.map((row): ClaimedDelivery => {
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
            leaseToken: tokens.get(row.id)!,
            leaseExpiresAt: row.leaseExpiresAt!,
            sealedSecrets: overlapLasts(row, at) ? [row.sealedSecret, row.sealedPreviousSecret!] : [row.sealedSecret],
          };
        });
      });
    },

    recordAttempts,

    async oldestSealedSecret() {
      const row = await engine.read(() => oldestSealedSecret.object({}));
      return row ? { subscriptionId: row.id, sealedSecret: row.sealedSecret } : undefined;
    },

    endExpiredRotationOverlaps() {
      return engine.write(() => endOverlaps.run({ now: now() }));
    },

    purgeEndedDeliveries(before) {
      return purgeInBatches(purgeDeliveriesBatch, before);
    },

    purgeEvents(before) {
      return purgeInBatches(purgeEventsBatch, before);
    },
  };
}
