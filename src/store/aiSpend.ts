// The AI spend ledger (ai_spend_entries), in integer millicents: a reservation before each
// provider call, settled at the actual cost or released after it. The cap check and the
// reservation share one BEGIN IMMEDIATE transaction, so concurrent calls, in this process or
// another one on the same database, can never reserve past the cap together.
import type BetterSqlite3 from 'better-sqlite3';
import { and, eq, sql } from 'drizzle-orm';
import { aiSpendEntries } from '../../db/schema.js';
import { runInImmediateTransaction } from './database.js';
import { drizzleFor } from './drizzle.js';
import { defaultRandomBytes, newId, type RandomBytes } from './ids.js';

export interface AiSpendStoreOptions {
  now?: () => number;
  randomBytes?: RandomBytes;
}

export interface AiSpendReservation {
  workspaceId: string;
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  operation: string;
  model: string;
  requestId: string;
  /** The most the call can cost. */
  reservedMillicents: number;
  /** The day's cap; null: uncapped. */
  capMillicents: number | null;
}

export type AiSpendReservationResult =
  | { reserved: true; entryId: string; spentMillicents: number }
  /** The reservation would take the day past the cap; `spentMillicents` is what counts already. */
  | { reserved: false; spentMillicents: number };

export interface AiSpendStore {
  /** What counts against the day's cap: settled entries at their actual cost, open reservations at their amount. */
  spentOnDay(workspaceId: string, day: string): number;
  reserve(reservation: AiSpendReservation): AiSpendReservationResult;
  /** Replaces an open reservation by the call's actual cost and usage. */
  settle(entryId: string, actual: { actualMillicents: number; promptTokens: number; completionTokens: number }): void;
  /** Drops an open reservation: the call failed and costs nothing. */
  release(entryId: string): void;
}

export function createAiSpendStore(db: BetterSqlite3.Database, options: AiSpendStoreOptions = {}): AiSpendStore {
  const now = options.now ?? Date.now;
  const randomBytes = options.randomBytes ?? defaultRandomBytes;
  const orm = drizzleFor(db);

  const spent = orm
    .select({
      millicents: sql<number>`coalesce(sum(CASE ${aiSpendEntries.state}
        WHEN 'settled' THEN ${aiSpendEntries.actualMillicents}
        WHEN 'reserved' THEN ${aiSpendEntries.reservedMillicents}
        ELSE 0 END), 0)`,
    })
    .from(aiSpendEntries)
    .where(and(eq(aiSpendEntries.workspaceId, sql.placeholder('workspaceId')), eq(aiSpendEntries.day, sql.placeholder('day'))))
    .prepare();
  const insert = orm
    .insert(aiSpendEntries)
    .values({
      id: sql.placeholder('id'),
      workspaceId: sql.placeholder('workspaceId'),
      day: sql.placeholder('day'),
      operation: sql.placeholder('operation'),
      model: sql.placeholder('model'),
      requestId: sql.placeholder('requestId'),
      state: 'reserved',
      reservedMillicents: sql.placeholder('reservedMillicents'),
      createdAt: sql.placeholder('createdAt'),
    })
    .prepare();
  // drizzle types a placeholder in `set` only inside a SQL fragment.
  const bound = (name: string) => sql`${sql.placeholder(name)}`;
  const openEntry = and(eq(aiSpendEntries.id, sql.placeholder('id')), eq(aiSpendEntries.state, 'reserved'));
  const settle = orm
    .update(aiSpendEntries)
    .set({
      state: 'settled',
      actualMillicents: bound('actualMillicents'),
      promptTokens: bound('promptTokens'),
      completionTokens: bound('completionTokens'),
      closedAt: bound('closedAt'),
    })
    .where(openEntry)
    .prepare();
  const release = orm.update(aiSpendEntries).set({ state: 'released', closedAt: bound('closedAt') }).where(openEntry).prepare();

  const spentOnDay = (workspaceId: string, day: string) => spent.get({ workspaceId, day })?.millicents ?? 0;

  return {
    spentOnDay,
    reserve(reservation) {
      if (!Number.isSafeInteger(reservation.reservedMillicents) || reservation.reservedMillicents < 0) {
        throw new RangeError(`a reservation is a whole number of millicents, not ${reservation.reservedMillicents}`);
      }
      return runInImmediateTransaction(db, () => {
        const spentMillicents = spentOnDay(reservation.workspaceId, reservation.day);
        if (reservation.capMillicents !== null && spentMillicents + reservation.reservedMillicents > reservation.capMillicents) {
          return { reserved: false, spentMillicents };
        }
        const entryId = newId('ais', randomBytes);
        const { capMillicents: _cap, ...entry } = reservation;
        insert.run({ ...entry, id: entryId, createdAt: now() });
        return { reserved: true, entryId, spentMillicents: spentMillicents + reservation.reservedMillicents };
      });
    },
    settle(entryId, actual) {
      const { changes } = settle.run({ id: entryId, ...actual, closedAt: now() });
      if (changes !== 1) throw new Error(`AI spend entry ${entryId} is not an open reservation`);
    },
    release(entryId) {
      release.run({ id: entryId, closedAt: now() });
    },
  };
}
