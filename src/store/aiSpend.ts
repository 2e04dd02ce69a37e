// The AI spend ledger (ai_spend_entries), in integer millicents: a reservation before each
// provider call, settled at the actual cost or released after it. The cap check and the
// reservation share one write transaction (SQLite: BEGIN IMMEDIATE; PostgreSQL: SERIALIZABLE), so
// concurrent calls, in this process or another instance on the same database, can never reserve
// past the cap together.
import { and, eq, sql } from 'drizzle-orm';
import { aiSpendEntries } from '../../db/schema.js';
import { engineOf, type StoreSource } from './engine.js';
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
  spentOnDay(workspaceId: string, day: string): Promise<number>;
  reserve(reservation: AiSpendReservation): Promise<AiSpendReservationResult>;
  /** Replaces an open reservation by the call's actual cost and usage. */
  settle(entryId: string, actual: { actualMillicents: number; promptTokens: number; completionTokens: number }): Promise<void>;
  /** Drops an open reservation: the call failed and costs nothing. */
  release(entryId: string): Promise<void>;
}

export function createAiSpendStore(source: StoreSource, options: AiSpendStoreOptions = {}): AiSpendStore {
  const now = options.now ?? Date.now;
  const randomBytes = options.randomBytes ?? defaultRandomBytes;
  const engine = engineOf(source);
  const { orm } = engine;

  // Cast back to an integer: PostgreSQL's sum() of bigint is numeric, which its driver reads as text.
  const spent = engine.statement<unknown, { workspaceId: string; day: string }>(
    orm
      .select({
        millicents: sql<number>`cast(coalesce(sum(CASE ${aiSpendEntries.state}
          WHEN 'settled' THEN ${aiSpendEntries.actualMillicents}
          WHEN 'reserved' THEN ${aiSpendEntries.reservedMillicents}
          ELSE 0 END), 0) as bigint)`,
      })
      .from(aiSpendEntries)
      .where(and(eq(aiSpendEntries.workspaceId, sql.placeholder('workspaceId')), eq(aiSpendEntries.day, sql.placeholder('day')))),
  );
  const insert = engine.statement(
    orm.insert(aiSpendEntries).values({
      id: sql.placeholder('id'),
      workspaceId: sql.placeholder('workspaceId'),
      day: sql.placeholder('day'),
      operation: sql.placeholder('operation'),
      model: sql.placeholder('model'),
      requestId: sql.placeholder('requestId'),
      state: 'reserved',
      reservedMillicents: sql.placeholder('reservedMillicents'),
      createdAt: sql.placeholder('createdAt'),
    }),
  );
  // drizzle types a placeholder in `set` only inside a SQL fragment.
  const bound = (name: string) => sql`${sql.placeholder(name)}`;
  const openEntry = and(eq(aiSpendEntries.id, sql.placeholder('id')), eq(aiSpendEntries.state, 'reserved'));
  const settle = engine.statement(
    orm
      .update(aiSpendEntries)
      .set({
        state: 'settled',
        actualMillicents: bound('actualMillicents'),
        promptTokens: bound('promptTokens'),
        completionTokens: bound('completionTokens'),
        closedAt: bound('closedAt'),
      })
      .where(openEntry),
  );
  const release = engine.statement(orm.update(aiSpendEntries).set({ state: 'released', closedAt: bound('closedAt') }).where(openEntry));

  // An aggregate without GROUP BY answers one row, and coalesce makes it 0 on a day without entries.
  const spentMillicentsOnDay = async (workspaceId: string, day: string) => (await spent.value({ workspaceId, day })) as number;

  return {
    spentOnDay: (workspaceId, day) => engine.read(() => spentMillicentsOnDay(workspaceId, day)),
    async reserve(reservation) {
      if (!Number.isSafeInteger(reservation.reservedMillicents) || reservation.reservedMillicents < 0) {
        throw new RangeError(`a reservation is a whole number of millicents, not ${reservation.reservedMillicents}`);
      }
      return engine.write(async (): Promise<AiSpendReservationResult> => {
        const spentMillicents = await spentMillicentsOnDay(reservation.workspaceId, reservation.day);
        if (reservation.capMillicents !== null && spentMillicents + reservation.reservedMillicents > reservation.capMillicents) {
          return { reserved: false, spentMillicents };
        }
        const entryId = newId('ais', randomBytes);
        const { capMillicents: _cap, ...entry } = reservation;
        await insert.run({ ...entry, id: entryId, createdAt: now() });
        return { reserved: true, entryId, spentMillicents: spentMillicents + reservation.reservedMillicents };
      });
    },
    async settle(entryId, actual) {
      const changes = await engine.write(() => settle.run({ id: entryId, ...actual, closedAt: now() }));
      if (changes !== 1) throw new Error(`AI spend entry ${entryId} is not an open reservation`);
    },
    async release(entryId) {
      await engine.write(() => release.run({ id: entryId, closedAt: now() }));
    },
  };
}
