// The monthly quota: personal-access-token calls per workspace and UTC calendar month, counted
// in the database with one atomic upsert so that every server process on it shares the count. The
// statements are written once; SQLite's admission path runs them synchronously on the connection,
// any engine (PostgreSQL) runs them asynchronously.
import type BetterSqlite3 from 'better-sqlite3';
import { and, eq, lt, sql } from 'drizzle-orm';
import { quotaCounters } from '../../db/schema.js';
import { compiledStatement, drizzleFor, type AppDatabase } from './drizzle.js';
import { engineOf, type StoreSource } from './engine.js';

export interface QuotaPeriod {
  /** `YYYY-MM`, UTC. */
  period: string;
  /** Milliseconds since the epoch: the first instant of the next UTC month, when the count restarts. */
  resetAt: number;
}

export interface QuotaDecision extends QuotaPeriod {
  /** False when the call would exceed the quota; such a call is not counted. */
  allowed: boolean;
  /** Calls counted this period, this one included when allowed. */
  used: number;
  /** The quota in force; null = uncapped. */
  limit: number | null;
  /** Calls left this period; null when uncapped. */
  remaining: number | null;
}

export interface QuotaUsage extends QuotaPeriod {
  used: number;
}

export interface QuotaCounterStore {
  /**
   * Counts one call unless the quota is spent; `limit` null counts without a cap. `earlierCalls`
   * are calls already admitted (counted by one process alone) and are added first, uncapped.
   */
  countQuotaCall(workspaceId: string, now: number, limit: number | null, earlierCalls?: number): QuotaDecision;
  /** Adds calls already admitted to the count of `period` (`YYYY-MM`), uncapped. */
  addQuotaCalls(workspaceId: string, period: string, calls: number): void;
  /** Calls counted in the period that contains `now`. */
  quotaUsage(workspaceId: string, now: number): QuotaUsage;
}

/** QuotaCounterStore on a store engine, without calls counted by one process alone (each count is one atomic statement). */
export interface EngineQuotaCounterStore {
  /** Counts one call unless the quota is spent; `limit` null counts without a cap. */
  countQuotaCall(workspaceId: string, now: number, limit: number | null): Promise<QuotaDecision>;
  quotaUsage(workspaceId: string, now: number): Promise<QuotaUsage>;
}

let lastMonth: QuotaPeriod = { period: '1970-01', resetAt: Date.UTC(1970, 1, 1) };
let lastMonthStart = 0;

/** The UTC calendar month containing `now` (counted on every token call: computed again only when `now` leaves the month of the call before). */
export function quotaPeriod(now: number): QuotaPeriod {
  if (!(now >= lastMonthStart && now < lastMonth.resetAt)) {
    const date = new Date(now);
    const year = date.getUTCFullYear();
    const month = date.getUTCMonth();
    lastMonthStart = Date.UTC(year, month, 1);
    lastMonth = Object.freeze({ period: `${String(year).padStart(4, '0')}-${String(month + 1).padStart(2, '0')}`, resetAt: Date.UTC(year, month + 1, 1) });
  }
  return lastMonth;
}

type CountArgs = { workspaceId: string; period: string };

function quotaCounterQueries(orm: AppDatabase) {
  const countOne = () =>
    orm
      .insert(quotaCounters)
      .values({ workspaceId: sql.placeholder('workspaceId'), period: sql.placeholder('period'), count: sql`1` })
      .$dynamic();
  const conflictTarget = [quotaCounters.workspaceId, quotaCounters.period];
  const addOne = { count: sql`${quotaCounters.count} + 1` };
  return {
    incrementUncapped: countOne().onConflictDoUpdate({ target: conflictTarget, set: addOne }).returning({ count: quotaCounters.count }),
    // At the cap the update's WHERE is false, nothing is returned and nothing changes.
    incrementCapped: countOne()
      .onConflictDoUpdate({ target: conflictTarget, set: addOne, setWhere: lt(quotaCounters.count, sql.placeholder('limit')) })
      .returning({ count: quotaCounters.count }),
    read: orm
      .select({ count: quotaCounters.count })
      .from(quotaCounters)
      .where(and(eq(quotaCounters.workspaceId, sql.placeholder('workspaceId')), eq(quotaCounters.period, sql.placeholder('period')))),
    addCalls: orm
      .insert(quotaCounters)
      .values({ workspaceId: sql.placeholder('workspaceId'), period: sql.placeholder('period'), count: sql.placeholder('calls') })
      .onConflictDoUpdate({ target: conflictTarget, set: { count: sql`${quotaCounters.count} + excluded.count` } }),
  };
}

function checkedLimit(limit: number | null): void {
  if (limit !== null && (!Number.isSafeInteger(limit) || limit < 0)) throw new RangeError('limit must be null or a whole number ≥ 0.');
}

function admitted(period: QuotaPeriod, used: number, limit: number | null): QuotaDecision {
  return { ...period, allowed: true, used, limit, remaining: limit === null ? null : Math.max(0, limit - used) };
}

function refused(period: QuotaPeriod, used: number, limit: number): QuotaDecision {
  return { ...period, allowed: false, used, limit, remaining: 0 };
}

export function createQuotaCounterStore(db: BetterSqlite3.Database): QuotaCounterStore {
  const queries = quotaCounterQueries(drizzleFor(db));
  // Compiled: this is counted on every token call.
  const incrementUncapped = compiledStatement<CountArgs, [number]>(db, queries.incrementUncapped);
  const incrementCapped = compiledStatement<CountArgs & { limit: number }, [number]>(db, queries.incrementCapped);
  const read = compiledStatement<CountArgs, [number]>(db, queries.read);
  const addCalls = compiledStatement<CountArgs & { calls: number }>(db, queries.addCalls);

  const usage = (workspaceId: string, period: QuotaPeriod): QuotaUsage => ({
    ...period,
    used: (read.value({ workspaceId, period: period.period }) as number | undefined) ?? 0,
  });

  return {
    countQuotaCall(workspaceId, now, limit, earlierCalls = 0) {
      const period = quotaPeriod(now);
      checkedLimit(limit);
      if (earlierCalls > 0) addCalls.run({ workspaceId, period: period.period, calls: earlierCalls });
      if (limit === null) return admitted(period, incrementUncapped.value({ workspaceId, period: period.period }) as number, null);
      // A quota of 0 refuses every call; the insert would count the first one.
      const counted = limit > 0 ? (incrementCapped.value({ workspaceId, period: period.period, limit }) as number | undefined) : undefined;
      if (counted !== undefined) return admitted(period, counted, limit);
      return refused(period, usage(workspaceId, period).used, limit);
    },

    addQuotaCalls(workspaceId, period, calls) {
      if (calls > 0) addCalls.run({ workspaceId, period, calls });
    },

    quotaUsage(workspaceId, now) {
      return usage(workspaceId, quotaPeriod(now));
    },
  };
}

export function createEngineQuotaCounterStore(source: StoreSource): EngineQuotaCounterStore {
  const engine = engineOf(source);
  const queries = quotaCounterQueries(engine.orm);
  const incrementUncapped = engine.statement<unknown, CountArgs>(queries.incrementUncapped);
  const incrementCapped = engine.statement<unknown, CountArgs & { limit: number }>(queries.incrementCapped);
  const read = engine.statement<unknown, CountArgs>(queries.read);

  const used = async (workspaceId: string, period: QuotaPeriod) => ((await read.value({ workspaceId, period: period.period })) as number | undefined) ?? 0;

  return {
    async countQuotaCall(workspaceId, now, limit) {
      const period = quotaPeriod(now);
      checkedLimit(limit);
      return engine.autocommit(async () => {
        if (limit === null) return admitted(period, (await incrementUncapped.value({ workspaceId, period: period.period })) as number, null);
        const counted = limit > 0 ? ((await incrementCapped.value({ workspaceId, period: period.period, limit })) as number | undefined) : undefined;
        if (counted !== undefined) return admitted(period, counted, limit);
        return refused(period, await used(workspaceId, period), limit);
      });
    },

    async quotaUsage(workspaceId, now) {
      const period = quotaPeriod(now);
      return { ...period, used: await engine.read(() => used(workspaceId, period)) };
    },
  };
}
