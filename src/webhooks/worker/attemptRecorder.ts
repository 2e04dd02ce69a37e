import { eq, sql } from 'drizzle-orm';
import { workspaces } from '../../../db/schema.js';
import type { Logger } from '../../logger.js';
import { isDatabaseBusy } from '../../store/database.js';
import { engineOf, type StoreSource } from '../../store/engine.js';
import {
  attemptSucceeded,
  describeOutcome,
  type AttemptOutcome,
  type AttemptToRecord,
  type ClaimedDelivery,
  type RecordingResult,
  type WebhookDeliveryStore,
} from '../../store/webhookDeliveries.js';
import { effectiveLimits } from '../../limits/workspaceLimits.js';
import { withWorkspaceColumns, workspaceFromRow } from '../../store/workspaces.js';
import { nextAttemptAt } from '../retrySchedule.js';
import type { AttemptLogFields } from './deliveryAttempt.js';

/**
 * Recording attempts: the outcomes of the attempts that ended during one turn of the event loop
 * are recorded together, in one transaction, on the next, each with its next attempt time on the
 * workspace's retry schedule; the store disables a subscription that answered 410 or kept failing.
 * An outcome waits in memory for that turn and the transaction only, and a crash meanwhile leaves
 * the delivery claimed, to be attempted again once the lease expires.
 */

export interface AttemptRecorderOptions {
  db: StoreSource;
  store: Pick<WebhookDeliveryStore, 'recordAttempts' | 'claimDue'>;
  logger: Logger;
  /** Names the claims made in the recording transaction. */
  workerId: string;
  now: () => number;
  /** A number in [0, 1): the retry jitter. */
  random: () => number;
  /**
   * How many deliveries to claim in the recording transaction, the slots of the `recording`
   * attempts included; that room stays reserved until `onClaimed` is called with the same `room`.
   */
  roomAfter(recording: number): number;
  /** Called once per `roomAfter`, when the recording transaction has ended: the deliveries it claimed (none if it failed), to attempt now. */
  onClaimed(deliveries: ClaimedDelivery[], room: number): void;
  /** Subscriptions not to claim now (their target is at the worker's cap). */
  skipSubscriptions?(): readonly string[];
}

export interface AttemptRecorder {
  /**
   * Records the attempt with the others that end in this turn, and logs the result. When nothing
   * was written (the claim was lost, or the write failed) the delivery stays claimed and is
   * attempted again once the lease expires.
   */
  record(delivery: ClaimedDelivery, outcome: AttemptOutcome, fields: AttemptLogFields): Promise<void>;
}

export function createAttemptRecorder(options: AttemptRecorderOptions): AttemptRecorder {
  const { store, logger, workerId, now, random } = options;
  const engine = engineOf(options.db);
  const workspaceById = engine.statement<unknown, { id: string }>(
    engine.orm.select(withWorkspaceColumns({}).columns).from(workspaces).where(eq(workspaces.id, sql.placeholder('id'))),
  );

  type Ended = { claimed: ClaimedDelivery; outcome: AttemptOutcome; jitter: number; done: (result: RecordingResult) => void };
  let toRecord: Ended[] = [];
  function recordSoon(claimed: ClaimedDelivery, outcome: AttemptOutcome): Promise<RecordingResult> {
    if (toRecord.length === 0) setImmediate(() => void recordEnded());
    return new Promise((done) => toRecord.push({ claimed, outcome, jitter: random(), done }));
  }

  /** When a failed attempt is followed by another, on the schedule its workspace has in force now. */
  async function retryAt({ claimed, outcome, jitter }: Ended, at: number): Promise<number | null> {
    if (attemptSucceeded(outcome)) return null;
    const row = await workspaceById.row({ id: claimed.workspaceId });
    const workspace = row ? workspaceFromRow(row) : undefined;
    return nextAttemptAt({
      delaysSeconds: workspace ? effectiveLimits(workspace).webhookRetryDelaysSeconds.inForce : [],
      failedAttemptNumber: claimed.attemptCount + 1,
      nowMs: at,
      jitter,
      statusCode: outcome.statusCode,
      retryAfter: outcome.retryAfter ?? null,
    });
  }

  /** Claims up to `room` due deliveries; a failed claim is logged and claims nothing. */
  async function claimRoom(room: number): Promise<ClaimedDelivery[]> {
    if (room <= 0) return [];
    try {
      return await store.claimDue(workerId, room, options.skipSubscriptions?.() ?? []);
    } catch (error) {
      logger.error('webhook claim failed', { workerId, error });
      return [];
    }
  }

  // On PostgreSQL the whole change may run again (a serialization failure): it reads the clock
  // and the schedule again, with the jitter drawn once per attempt.
  async function recordAndClaim(ended: Ended[], room: number): Promise<{ results: RecordingResult[]; claimed: ClaimedDelivery[] }> {
    const at = now();
    const batch: AttemptToRecord[] = [];
    for (const attempt of ended) batch.push({ claimed: attempt.claimed, outcome: attempt.outcome, retryAt: await retryAt(attempt, at) });
    const results = await store.recordAttempts(batch);
    return { results, claimed: await claimRoom(room) };
  }

  // The room the recorded attempts leave is claimed with them. On SQLite in the same
  // transaction: one write transaction a turn, not two; a failed claim leaves the records to
  // commit. On PostgreSQL once they are committed: the claim commits apart at READ COMMITTED,
  // where the claims of other workers skip its rows (in the SERIALIZABLE recording they would
  // make one of the two fail and run again).
  const claimsWithRecords = engine.kind === 'sqlite';
  /** How often the recording of ended attempts is tried while SQLite answers busy (25, 50, 100, 200 ms apart: its claims' leases outlast them). */
  const BUSY_RECORDING_TRIES = 5;

  async function recordEnded(): Promise<void> {
    const batch = toRecord;
    toRecord = [];
    const room = options.roomAfter(batch.length);
    let results: RecordingResult[];
    let claimed: ClaimedDelivery[] = [];
    for (let tries = 1; ; tries += 1) {
      try {
        ({ results, claimed } = await engine.write(() => recordAndClaim(batch, claimsWithRecords ? room : 0)));
        break;
      } catch (error) {
        // Sent but not written: each try that finds the database busy (after its own busy wait)
        // is worth another while the lease holds, or the subscriber gets the event again.
        // PostgreSQL's serialization failures were already retried by the engine.
        if (engine.kind === 'sqlite' && tries < BUSY_RECORDING_TRIES && isDatabaseBusy(error)) {
          await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** (tries - 1)));
          continue;
        }
        results = batch.map(() => ({ error }));
        break;
      }
    }
    batch.forEach(({ done }, index) => done(results[index]!));
    if (!claimsWithRecords) claimed = await claimRoom(room);
    options.onClaimed(claimed, room);
  }

  return {
    async record(delivery, outcome, fields) {
      const result = await recordSoon(delivery, outcome);
      if ('error' in result) {
        // Nothing of this attempt was written: the delivery stays claimed and is attempted again
        // once the lease expires (the subscriber may see the event twice, never lose it).
        logger.error('webhook attempt not recorded', { ...fields, outcome: describeOutcome(outcome), error: result.error });
        return;
      }
      if ('lost' in result) {
        logger.warn('webhook attempt not recorded: the claim was lost', { ...fields, outcome: describeOutcome(outcome) });
        return;
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
    },
  };
}
