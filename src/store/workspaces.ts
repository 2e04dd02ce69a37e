// Workspaces: the tenants of the Work-Platform API, with their plan and per-workspace limit
// overrides. What is in force (the plan's value unless overridden) is src/limits/workspaceLimits.ts.
import { eq, sql } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import { workspacePlans, workspaces, type WorkspacePlan } from '../../db/schema.js';
import { engineOf, type StoreSource } from './engine.js';
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
  createWorkspace(input: CreateWorkspaceInput): Promise<{ id: string }>;
  getWorkspace(id: string): Promise<Workspace | undefined>;
  /** Sets the given overrides (null clears one) and leaves the others as they are. */
  setWorkspaceLimits(id: string, overrides: Partial<LimitOverrides>): Promise<Workspace>;
  /** Drops every override: the plan's values apply again. */
  clearWorkspaceLimits(id: string): Promise<Workspace>;
}

type WorkspaceRow = typeof workspaces.$inferSelect;

/** Every column of a workspace, selected as an array row and read back by workspaceFromRow. */
const workspaceColumns = {
  id: workspaces.id,
  name: workspaces.name,
  plan: workspaces.plan,
  readPerMinuteOverride: workspaces.readPerMinuteOverride,
  writePerMinuteOverride: workspaces.writePerMinuteOverride,
  aiPerMinuteOverride: workspaces.aiPerMinuteOverride,
  monthlyQuotaOverride: workspaces.monthlyQuotaOverride,
  aiDailySpendCapCentsOverride: workspaces.aiDailySpendCapCentsOverride,
  webhookRetryDelaysSecondsOverride: workspaces.webhookRetryDelaysSecondsOverride,
  createdAt: workspaces.createdAt,
} satisfies Record<keyof WorkspaceRow, SQLiteColumn>;

/** Where each column of workspaceColumns comes in a row. */
const position = Object.fromEntries(Object.keys(workspaceColumns).map((member, index) => [member, index])) as Record<keyof WorkspaceRow, number>;

/**
 * `selection` followed by every column of the joined workspace (under `workspace_…` keys), for a
 * statement that reads a token or user and its workspace at once; workspaceFromRow reads the
 * workspace back from `workspaceOffset`.
 */
export function withWorkspaceColumns(selection: Record<string, SQLiteColumn>): { columns: Record<string, SQLiteColumn>; workspaceOffset: number } {
  const columns: Record<string, SQLiteColumn> = { ...selection };
  for (const [member, column] of Object.entries(workspaceColumns)) columns[`workspace_${member}`] = column;
  return { columns, workspaceOffset: Object.keys(selection).length };
}

/** The workspace in an array row from `offset` on (see withWorkspaceColumns); undefined when a join found none. */
export function workspaceFromRow(row: readonly unknown[], offset = 0): Workspace | undefined {
  const id = row[offset + position.id];
  if (id === null || id === undefined) return undefined;
  const delays = row[offset + position.webhookRetryDelaysSecondsOverride] as string | null;
  return {
    id: id as string,
    name: row[offset + position.name] as string,
    plan: row[offset + position.plan] as WorkspacePlan,
    overrides: {
      readPerMinute: row[offset + position.readPerMinuteOverride] as number | null,
      writePerMinute: row[offset + position.writePerMinuteOverride] as number | null,
      aiPerMinute: row[offset + position.aiPerMinuteOverride] as number | null,
      monthlyQuota: row[offset + position.monthlyQuotaOverride] as number | null,
      aiDailySpendCapCents: row[offset + position.aiDailySpendCapCentsOverride] as number | null,
      webhookRetryDelaysSeconds: delays === null ? null : (JSON.parse(delays) as number[]),
    },
    createdAt: row[offset + position.createdAt] as number,
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

export function createWorkspaceStore(source: StoreSource, options: WorkspaceStoreOptions = {}): WorkspaceStore {
  const now = options.now ?? Date.now;
  const randomBytes = options.randomBytes ?? defaultRandomBytes;
  const engine = engineOf(source);
  const { orm } = engine;

  const selectById = engine.statement<unknown, { id: string }>(orm.select(workspaceColumns).from(workspaces).where(eq(workspaces.id, sql.placeholder('id'))));
  const insert = engine.statement(
    orm.insert(workspaces).values({
      id: sql.placeholder('id'),
      name: sql.placeholder('name'),
      plan: sql.placeholder('plan'),
      createdAt: sql.placeholder('createdAt'),
    }),
  );
  const updateOverrides = engine.statement(
    orm
      .update(workspaces)
      .set({
        readPerMinuteOverride: sql`${sql.placeholder('readPerMinute')}`,
        writePerMinuteOverride: sql`${sql.placeholder('writePerMinute')}`,
        aiPerMinuteOverride: sql`${sql.placeholder('aiPerMinute')}`,
        monthlyQuotaOverride: sql`${sql.placeholder('monthlyQuota')}`,
        aiDailySpendCapCentsOverride: sql`${sql.placeholder('aiDailySpendCapCents')}`,
        webhookRetryDelaysSecondsOverride: sql`${sql.placeholder('webhookRetryDelaysSeconds')}`,
      })
      .where(eq(workspaces.id, sql.placeholder('id'))),
  );
  const readWorkspace = async (id: string) => {
    const row = await selectById.row({ id });
    return row ? workspaceFromRow(row) : undefined;
  };

  const writeOverrides = (id: string, change: Partial<LimitOverrides> | 'clear'): Promise<Workspace> =>
    engine.write(async () => {
      const current = await readWorkspace(id);
      if (!current) throw new NotFoundError('workspace', id);
      const next: LimitOverrides = change === 'clear' ? noOverrides : { ...current.overrides, ...change };
      await updateOverrides.run({
        ...next,
        webhookRetryDelaysSeconds: next.webhookRetryDelaysSeconds === null ? null : JSON.stringify(next.webhookRetryDelaysSeconds),
        id,
      });
      return (await readWorkspace(id))!;
    });

  return {
    async createWorkspace({ name, plan, id: fixedId }) {
      const trimmed = typeof name === 'string' ? name.trim() : '';
      if (trimmed === '') throw new StoreError('invalid_argument', 'A workspace needs a non-empty name.');
      if (!(workspacePlans as readonly string[]).includes(plan)) {
        throw new StoreError('invalid_argument', `Unknown plan "${String(plan)}"; use one of ${workspacePlans.join(', ')}.`);
      }
      const id = fixedId ?? newId('ten', randomBytes);
      if (!/^ten_[A-Za-z0-9]+$/.test(id)) throw new StoreError('invalid_argument', `Invalid workspace id "${id}".`);
      await engine.write(() => insert.run({ id, name: trimmed, plan, createdAt: now() }));
      return { id };
    },

    getWorkspace: (id) => engine.read(() => readWorkspace(id)),

    async setWorkspaceLimits(id, overrides) {
      checkOverrides(overrides);
      // Drop undefined members so that they leave the stored value alone.
      const change = Object.fromEntries(Object.entries(overrides).filter(([, value]) => value !== undefined)) as Partial<LimitOverrides>;
      return writeOverrides(id, change);
    },

    async clearWorkspaceLimits(id) {
      return writeOverrides(id, 'clear');
    },
  };
}
