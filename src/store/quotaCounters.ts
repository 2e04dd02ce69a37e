// The monthly quota: personal-access-token calls per workspace and UTC calendar month, counted
// in SQLite with one atomic upsert so that every server process on the database shares the count.
import type BetterSqlite3 from 'better-sqlite3';
import { and, eq, lt, sql } from 'drizzle-orm';
import { quotaCounters } from '../../db/schema.js';
import { compiledStatement, drizzleFor } from './drizzle.js';

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

/** The UTC calendar month containing `now`. */
export function quotaPeriod(now: number): QuotaPeriod {
  const date = new Date(now);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  return {
    period: `${String(year).padStart(4, '0')}-${String(month + 1).padStart(2, '0')}`,
    resetAt: Date.UTC(year, month + 1, 1),
  };
}

/** quotaPeriod, computed again only when `now` leaves the month of the previous call. */
function monthCache(): (now: number) => QuotaPeriod {
  let current = quotaPeriod(0);
  let monthStart = 0;
  return (now) => {
    if (!(now >= monthStart && now < current.resetAt)) {
      current = quotaPeriod(now);
      const date = new Date(now);
      monthStart = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
    }
    return current;
  };
}

export function createQuotaCounterStore(db: BetterSqlite3.Database): QuotaCounterStore {
  const orm = drizzleFor(db);
  // Compiled: this is counted on every token call.
  const countOne = () =>
    orm
      .insert(quotaCounters)
      .values({ workspaceId: sql.placeholder('workspaceId'), period: sql.placeholder('period'), count: sql`1` })
      .$dynamic();
  const conflictTarget = [quotaCounters.workspaceId, quotaCounters.period];
  const addOne = { count: sql`${quotaCounters.count} + 1` };
  const incrementUncapped = compiledStatement<{ workspaceId: string; period: string }, [number]>(
    db,
    countOne().onConflictDoUpdate({ target: conflictTarget, set: addOne }).returning({ count: quotaCounters.count }),
  );
  // At the cap the update's WHERE is false, nothing is returned and nothing changes.
  const incrementCapped = compiledStatement<{ workspaceId: string; period: string; limit: number }, [number]>(
    db,
    countOne()
      .onConflictDoUpdate({ target: conflictTarget, set: addOne, setWhere: lt(quotaCounters.count, sql.placeholder('limit')) })
      .returning({ count: quotaCounters.count }),
  );
  const read = compiledStatement<{ workspaceId: string; period: string }, [number]>(
    db,
    orm
      .select({ count: quotaCounters.count })
      .from(quotaCounters)
      .where(and(eq(quotaCounters.workspaceId, sql.placeholder('workspaceId')), eq(quotaCounters.period, sql.placeholder('period')))),
  );
  const addCalls = compiledStatement<{ workspaceId: string; period: string; calls: number }>(
    db,
    orm
      .insert(quotaCounters)
      .values({ workspaceId: sql.placeholder('workspaceId'), period: sql.placeholder('period'), count: sql.placeholder('calls') })
      .onConflictDoUpdate({ target: conflictTarget, set: { count: sql`${quotaCounters.count} + excluded.count` } }),
  );
  const periodOf = monthCache();

  const usage = (workspaceId: string, period: QuotaPeriod): QuotaUsage => ({
    ...period,
    used: (read.value({ workspaceId, period: period.period }) as number | undefined) ?? 0,
  });

  return {
    countQuotaCall(workspaceId, now, limit, earlierCalls = 0) {
      const period = periodOf(now);
      if (limit !== null && (!Number.isSafeInteger(limit) || limit < 0)) throw new RangeError('limit must be null or a whole number ≥ 0.');
      if (earlierCalls > 0) addCalls.run({ workspaceId, period: period.period, calls: earlierCalls });
      if (limit === null) {
        const count = incrementUncapped.value({ workspaceId, period: period.period }) as number;
        return { ...period, allowed: true, used: count, limit: null, remaining: null };
      }
      // A quota of 0 refuses every call; the insert would count the first one.
      const counted = limit > 0 ? (incrementCapped.value({ workspaceId, period: period.period, limit }) as number | undefined) : undefined;
      if (counted !== undefined) return { ...period, allowed: true, used: counted, limit, remaining: Math.max(0, limit - counted) };
      const { used } = usage(workspaceId, period);
      return { ...period, allowed: false, used, limit, remaining: 0 };
    },

    addQuotaCalls(workspaceId, period, calls) {
      if (calls > 0) addCalls.run({ workspaceId, period, calls });
    },

    quotaUsage(workspaceId, now) {
      return usage(workspaceId, periodOf(now));
    },
  };
}
