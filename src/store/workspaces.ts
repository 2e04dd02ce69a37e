// Workspaces: the tenants of the Work-Platform API, with their plan and per-workspace limit
// overrides. What is in force (the plan's value unless overridden) is src/limits/workspaceLimits.ts.
import type BetterSqlite3 from 'better-sqlite3';
import { eq } from 'drizzle-orm';
import { workspacePlans, workspaces, type WorkspacePlan } from '../../db/schema.js';
import { drizzleFor } from './drizzle.js';
import { StoreError } from './errors.js';
import { defaultRandomBytes, newId, type RandomBytes } from './ids.js';
import { NotFoundError } from './workPlatformErrors.js';

export { workspacePlans, type WorkspacePlan };

/** A workspace's own limit values as stored; null = the plan's value. */
export interface LimitOverrides {
  readPerMinute: number | null;
  writePerMinute: number | null;
  aiPerMinute: number | null;
  /** Personal-access-token calls per UTC calendar month. */
  monthlyQuota: number | null;
  /** US cents of AI spend per UTC day. */
  aiDailySpendCapCents: number | null;
  /** Seconds to wait before each retry of a failed webhook delivery, in order. */
  webhookRetryDelaysSeconds: number[] | null;
}
const limitOverrideNames = [
  'readPerMinute',
  'writePerMinute',
  'aiPerMinute',
  'monthlyQuota',
  'aiDailySpendCapCents',
  'webhookRetryDelaysSeconds',
] as const satisfies readonly (keyof LimitOverrides)[];

export interface Workspace {
  id: string;
  name: string;
  plan: WorkspacePlan;
  overrides: LimitOverrides;
  /** Milliseconds since the epoch. */
  createdAt: number;
}

/** Accepted override ranges, so that a typo cannot switch a workspace off or overflow a counter. */
export const overrideBounds = {
  perMinute: { min: 1, max: 1_000_000 },
  monthlyQuota: { min: 0, max: 1_000_000_000_000 },
  aiDailySpendCapCents: { min: 0, max: 1_000_000_000_000 },
  webhookRetryDelays: { minCount: 1, maxCount: 20, minSeconds: 1, maxSeconds: 7 * 24 * 60 * 60 },
} as const;

function checkOverrides(overrides: Partial<LimitOverrides>): void {
  const integerIn = (name: string, value: unknown, min: number, max: number) => {
    if (value === null || value === undefined) return;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
      throw new StoreError('invalid_argument', `${name} must be a whole number from ${min} to ${max}; got ${String(value)}.`);
    }
  };
  const { perMinute, monthlyQuota, aiDailySpendCapCents, webhookRetryDelays } = overrideBounds;
  for (const name of Object.keys(overrides)) {
    if (!(limitOverrideNames as readonly string[]).includes(name)) throw new StoreError('invalid_argument', `Unknown limit "${name}".`);
  }
  integerIn('readPerMinute', overrides.readPerMinute, perMinute.min, perMinute.max);
  integerIn('writePerMinute', overrides.writePerMinute, perMinute.min, perMinute.max);
  integerIn('aiPerMinute', overrides.aiPerMinute, perMinute.min, perMinute.max);
  integerIn('monthlyQuota', overrides.monthlyQuota, monthlyQuota.min, monthlyQuota.max);
  integerIn('aiDailySpendCapCents', overrides.aiDailySpendCapCents, aiDailySpendCapCents.min, aiDailySpendCapCents.max);
  const delays = overrides.webhookRetryDelaysSeconds;
  if (delays !== null && delays !== undefined) {
    if (!Array.isArray(delays) || delays.length < webhookRetryDelays.minCount || delays.length > webhookRetryDelays.maxCount) {
      throw new StoreError(
        'invalid_argument',
        `webhookRetryDelaysSeconds must list ${webhookRetryDelays.minCount} to ${webhookRetryDelays.maxCount} delays.`,
      );
    }
    delays.forEach((delay, index) =>
      integerIn(`webhookRetryDelaysSeconds[${index}]`, delay, webhookRetryDelays.minSeconds, webhookRetryDelays.maxSeconds),
    );
  }
}

export interface CreateWorkspaceInput {
  name: string;
  plan: WorkspacePlan;
  /** A fixed id (the demo data set uses one); a new `ten_…` id by default. */
  id?: string;
}

export interface WorkspaceStoreOptions {
  now?: () => number;
  randomBytes?: RandomBytes;
}

export interface WorkspaceStore {
  createWorkspace(input: CreateWorkspaceInput): { id: string };
  /** On the hot path of every request (plan and overrides for rate limits): prepared once. */
  getWorkspace(id: string): Workspace | undefined;
  /** Sets the given overrides (null clears one) and leaves the others as they are. */
  setWorkspaceLimits(id: string, overrides: Partial<LimitOverrides>): Workspace;
  /** Drops every override: the plan's values apply again. */
  clearWorkspaceLimits(id: string): Workspace;
}

type WorkspaceRow = typeof workspaces.$inferSelect;

const workspaceColumnNames: Record<keyof WorkspaceRow, string> = {
  id: 'id',
  name: 'name',
  plan: 'plan',
  readPerMinuteOverride: 'read_per_minute_override',
  writePerMinuteOverride: 'write_per_minute_override',
  aiPerMinuteOverride: 'ai_per_minute_override',
  monthlyQuotaOverride: 'monthly_quota_override',
  aiDailySpendCapCentsOverride: 'ai_daily_spend_cap_cents_override',
  webhookRetryDelaysSecondsOverride: 'webhook_retry_delays_seconds_override',
  createdAt: 'created_at',
};
const joinedPrefix = 'workspace_';
const joinedMemberNames = Object.keys(workspaceColumnNames).map((member) => [member, `${joinedPrefix}${member}`] as const);

/**
 * The select list of a workspace joined to another table under `tableAlias`: each column named
 * `workspace_<member>`. Lets authentication read the token or user and its workspace in one
 * statement; workspaceFromJoin reads them back.
 */
export function joinedWorkspaceColumns(tableAlias: string): string {
  return Object.entries(workspaceColumnNames)
    .map(([member, column]) => `${tableAlias}.${column} AS ${joinedPrefix}${member}`)
    .join(', ');
}

/** The workspace of a row selected with joinedWorkspaceColumns; undefined when the join found none. */
export function workspaceFromJoin(row: Record<string, unknown>): Workspace | undefined {
  if (row[`${joinedPrefix}id`] === null || row[`${joinedPrefix}id`] === undefined) return undefined;
  const workspaceRow: Record<string, unknown> = {};
  for (const [member, joinedName] of joinedMemberNames) workspaceRow[member] = row[joinedName];
  return toWorkspace(workspaceRow as WorkspaceRow);
}

function toWorkspace(row: WorkspaceRow): Workspace {
  return {
    id: row.id,
    name: row.name,
    plan: row.plan,
    overrides: {
      readPerMinute: row.readPerMinuteOverride,
      writePerMinute: row.writePerMinuteOverride,
      aiPerMinute: row.aiPerMinuteOverride,
      monthlyQuota: row.monthlyQuotaOverride,
      aiDailySpendCapCents: row.aiDailySpendCapCentsOverride,
      webhookRetryDelaysSeconds:
        row.webhookRetryDelaysSecondsOverride === null ? null : (JSON.parse(row.webhookRetryDelaysSecondsOverride) as number[]),
    },
    createdAt: row.createdAt,
  };
}

const noOverrides: LimitOverrides = {
  readPerMinute: null,
  writePerMinute: null,
  aiPerMinute: null,
  monthlyQuota: null,
  aiDailySpendCapCents: null,
  webhookRetryDelaysSeconds: null,
};

export function createWorkspaceStore(db: BetterSqlite3.Database, options: WorkspaceStoreOptions = {}): WorkspaceStore {
  const now = options.now ?? Date.now;
  const randomBytes = options.randomBytes ?? defaultRandomBytes;

  const orm = drizzleFor(db);
  const selectById = db.prepare<{ id: string }, WorkspaceRow>(
    `SELECT ${Object.entries(workspaceColumnNames)
      .map(([member, column]) => `${column} AS ${member}`)
      .join(', ')} FROM workspaces WHERE id = @id`,
  );

  const writeOverrides = (id: string, change: Partial<LimitOverrides> | 'clear'): Workspace =>
    orm.transaction(
      (tx) => {
        const row = selectById.get({ id });
        if (!row) throw new NotFoundError('workspace', id);
        const next: LimitOverrides = change === 'clear' ? noOverrides : { ...toWorkspace(row).overrides, ...change };
        tx.update(workspaces)
          .set({
            readPerMinuteOverride: next.readPerMinute,
            writePerMinuteOverride: next.writePerMinute,
            aiPerMinuteOverride: next.aiPerMinute,
            monthlyQuotaOverride: next.monthlyQuota,
            aiDailySpendCapCentsOverride: next.aiDailySpendCapCents,
            webhookRetryDelaysSecondsOverride:
              next.webhookRetryDelaysSeconds === null ? null : JSON.stringify(next.webhookRetryDelaysSeconds),
          })
          .where(eq(workspaces.id, id))
          .run();
        return toWorkspace(selectById.get({ id })!);
      },
      { behavior: 'immediate' },
    );

  return {
    createWorkspace({ name, plan, id: fixedId }) {
      const trimmed = typeof name === 'string' ? name.trim() : '';
      if (trimmed === '') throw new StoreError('invalid_argument', 'A workspace needs a non-empty name.');
      if (!(workspacePlans as readonly string[]).includes(plan)) {
        throw new StoreError('invalid_argument', `Unknown plan "${String(plan)}"; use one of ${workspacePlans.join(', ')}.`);
      }
      const id = fixedId ?? newId('ten', randomBytes);
      if (!/^ten_[A-Za-z0-9]+$/.test(id)) throw new StoreError('invalid_argument', `Invalid workspace id "${id}".`);
      orm.insert(workspaces).values({ id, name: trimmed, plan, createdAt: now() }).run();
      return { id };
    },

    getWorkspace(id) {
      const row = selectById.get({ id });
      return row ? toWorkspace(row) : undefined;
    },

    setWorkspaceLimits(id, overrides) {
      checkOverrides(overrides);
      // Drop undefined members so that they leave the stored value alone.
      const change = Object.fromEntries(Object.entries(overrides).filter(([, value]) => value !== undefined)) as Partial<LimitOverrides>;
      return writeOverrides(id, change);
    },

    clearWorkspaceLimits(id) {
      return writeOverrides(id, 'clear');
    },
  };
}
