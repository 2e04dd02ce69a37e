// Bench data beside the demo set: task workspaces of the given sizes, with limits lifted so the
// load is not cut short by 429s, a token per workspace and a portfolio key without a low allowance.
// The same code fills SQLite and PostgreSQL: the stores take either engine, and the bulk rows go in
// through one engine statement that inserts a batch of rows at a time.
import { sql, type Placeholder } from 'drizzle-orm';
import type { SQLiteTable } from 'drizzle-orm/sqlite-core';
import { createApiKeyStore } from '../../src/store/apiKeys.js';
import { issueApiKey } from '../../src/auth/apiKeys.js';
import { issuePersonalAccessToken } from '../../src/auth/personalAccessTokens.js';
import { createPersonalAccessTokenStore } from '../../src/store/personalAccessTokens.js';
import { createProjectStore } from '../../src/store/projects.js';
import { createUserStore } from '../../src/store/users.js';
import { createWorkspaceStore } from '../../src/store/workspaces.js';
import { engineOf, type StoreEngine, type StoreSource } from '../../src/store/engine.js';
import { deals, dealStages, taskPriorities, taskStatuses, tasks } from '../../db/schema.js';
import { priorityRank } from '../../src/store/tasks.js';
import { scopeCatalogue } from '../../generated/work-platform/rules.js';
import { loadDemoData } from '../../src/demo/demoData.js';
import { openDatabase } from '../../src/store/database.js';

export interface BenchWorkspace {
  workspaceId: string;
  projectId: string;
  taskCount: number;
  /** A Personal Access Token with every scope. */
  token: string;
  /** The owner the token belongs to. */
  ownerId: string;
}

export interface BenchData {
  workspaces: BenchWorkspace[];
  portfolioKey: string;
}

const ALL_SCOPES = [...scopeCatalogue];
const LIFTED = 1_000_000_000;
// The largest per-minute override a workspace takes: about 16,700 requests a second, beyond this machine.
const MAX_PER_MINUTE = 1_000_000;
// Every value of the contract's enums, in the spec's order (checked against the generated types).
const STATUSES = taskStatuses;
const PRIORITIES = taskPriorities;

/** Rows per statement: 11 parameters a row stays far below SQLite's 32,766 and PostgreSQL's 65,535 parameters. */
const ROWS_PER_INSERT = 500;

/**
 * Inserts `rows` (objects keyed by the table's column properties, all of them with the same keys),
 * ROWS_PER_INSERT rows per statement, each statement its own write transaction. Each statement has
 * a placeholder per value and is compiled once per batch length: one round trip a batch on
 * PostgreSQL, and on SQLite as quick as a prepared single-row insert run for each row. A transaction
 * per batch, not one for all, keeps each transaction small.
 */
async function insertRows(engine: StoreEngine, table: SQLiteTable, rows: readonly Record<string, unknown>[]): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]!);
  const statements = new Map<number, ReturnType<StoreEngine['statement']>>();
  const statementFor = (length: number) => {
    let statement = statements.get(length);
    if (!statement) {
      const values = Array.from({ length }, (_, row) =>
        Object.fromEntries(columns.map((column): [string, Placeholder] => [column, sql.placeholder(`${column}${row}`)])),
      );
      statement = engine.statement(engine.orm.insert(table).values(values as never));
      statements.set(length, statement);
    }
    return statement;
  };
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
    const batch = rows.slice(start, start + ROWS_PER_INSERT);
    const args: Record<string, unknown> = {};
    for (const [row, values] of batch.entries()) for (const column of columns) args[`${column}${row}`] = values[column];
    await engine.write(() => statementFor(batch.length).run(args));
  }
}

/** A new SQLite file at `databasePath` holding the demo data and task workspaces of the given sizes, closed again for a server to open. */
export async function seedBenchDatabase(databasePath: string, sizes: readonly number[]): Promise<BenchData> {
  const db = openDatabase(databasePath);
  try {
    const demo = await loadDemoData(db, Date.now, {});
    return await seedBenchData(db, sizes, demo.portfolio.tenantId);
  } finally {
    db.close();
  }
}

export async function seedBenchData(source: StoreSource, sizes: readonly number[], portfolioTenantId: string): Promise<BenchData> {
  const engine = engineOf(source);
  const workspaces = createWorkspaceStore(engine);
  const users = createUserStore(engine);
  const projects = createProjectStore(engine);
  const tokens = createPersonalAccessTokenStore(engine);
  const start = Date.UTC(2026, 0, 1);
  const seeded: BenchData['workspaces'] = [];
  for (const [index, size] of sizes.entries()) {
    // Enterprise has no monthly quota; the per-minute allowances are lifted by override.
    const { id: workspaceId } = await workspaces.createWorkspace({ name: `Bench ${size} tasks`, plan: 'enterprise' });
    await workspaces.setWorkspaceLimits(workspaceId, { readPerMinute: MAX_PER_MINUTE, writePerMinute: MAX_PER_MINUTE, aiPerMinute: MAX_PER_MINUTE });
    const { id: userId } = await users.createUser({ workspaceId, role: 'owner', name: 'Bench owner' });
    const projectId = (await projects.createProject(workspaceId, { name: 'Bench project' }, { id: userId, kind: 'USER' })).id;
    await insertRows(
      engine,
      tasks,
      Array.from({ length: size }, (_, row) => {
        const priority = PRIORITIES[row % PRIORITIES.length]!;
        const at = start + row * 1000;
        return {
          id: `tsk_bench${index}x${row.toString(36).padStart(6, '0')}`,
          workspaceId,
          projectId,
          title: `Bench task ${row}`,
          status: STATUSES[row % STATUSES.length],
          priority,
          priorityRank: priorityRank(priority),
          dueOn: row % 5 === 0 ? null : at + 7 * 86_400_000,
          version: 1,
          createdAt: at,
          updatedAt: at,
          completedAt: STATUSES[row % STATUSES.length] === 'DONE' ? at : null,
        };
      }),
    );
    const { token } = await issuePersonalAccessToken(tokens, { workspaceId, userId, scopes: ALL_SCOPES });
    seeded.push({ workspaceId, projectId, taskCount: size, token, ownerId: userId });
  }
  const { key } = await issueApiKey(createApiKeyStore(engine), { tenantId: portfolioTenantId, rateLimit: LIFTED });
  return { workspaces: seeded, portfolioKey: key };
}

export interface AnalyticsBenchWorkspace {
  workspaceId: string;
  taskCount: number;
  dealCount: number;
  /** A Personal Access Token with every scope the bench uses, analytics:read among them. */
  token: string;
  /** The first and last day (YYYY-MM-DD) the seeded tasks and deals were created on. */
  firstDay: string;
  lastDay: string;
}

const DAY_MS = 86_400_000;
const CURRENCIES = ['EUR', 'USD', 'GBP', 'JPY'] as const;

/**
 * One workspace for the analytics phase: `taskCount` tasks and `dealCount` deals created evenly
 * over 425 days from 2025-01-01, in five projects and four owners' hands. A quarter of the tasks
 * are DONE, each completed 0 to 30 days after creation; four in five have a due date 0 to 20 days
 * after creation; deals are in every stage and four currencies.
 */
/** Analytics workspaces seeded so far in this process: each one's row ids get their own infix. */
let analyticsWorkspacesSeeded = 0;

export async function seedAnalyticsWorkspace(source: StoreSource, taskCount: number, dealCount: number): Promise<AnalyticsBenchWorkspace> {
  const infix = analyticsWorkspacesSeeded === 0 ? '' : `n${analyticsWorkspacesSeeded}x`;
  analyticsWorkspacesSeeded += 1;
  const engine = engineOf(source);
  const workspaces = createWorkspaceStore(engine);
  const users = createUserStore(engine);
  const projects = createProjectStore(engine);
  const { id: workspaceId } = await workspaces.createWorkspace({ name: `Bench analytics`, plan: 'enterprise' });
  await workspaces.setWorkspaceLimits(workspaceId, { readPerMinute: MAX_PER_MINUTE, writePerMinute: MAX_PER_MINUTE, aiPerMinute: MAX_PER_MINUTE });
  const ownerIds: string[] = [];
  for (let index = 0; index < 4; index += 1) {
    ownerIds.push((await users.createUser({ workspaceId, role: index === 0 ? 'owner' : 'member', name: `Bench user ${index}` })).id);
  }
  const actor = { id: ownerIds[0]!, kind: 'USER' as const };
  const projectIds: string[] = [];
  for (let index = 0; index < 5; index += 1) projectIds.push((await projects.createProject(workspaceId, { name: `Bench analytics ${index}` }, actor)).id);
  const start = Date.UTC(2025, 0, 1);
  const span = 425 * DAY_MS;
  await insertRows(
    engine,
    tasks,
    Array.from({ length: taskCount }, (_, row) => {
      const at = start + Math.floor((row * span) / taskCount);
      const priority = PRIORITIES[row % PRIORITIES.length]!;
      const status = STATUSES[row % STATUSES.length]!;
      const completedAt = status === 'DONE' ? at + ((row * 7919) % (30 * DAY_MS)) : null;
      return {
        id: `tsk_benchan${infix}${row.toString(36).padStart(6, '0')}`,
        workspaceId,
        projectId: projectIds[row % projectIds.length],
        title: `Analytics task ${row}`,
        status,
        priority,
        priorityRank: priorityRank(priority),
        dueOn: row % 5 === 0 ? null : at + (row % 21) * DAY_MS,
        version: 1,
        createdAt: at,
        updatedAt: completedAt ?? at,
        completedAt,
      };
    }),
  );
  await insertRows(
    engine,
    deals,
    Array.from({ length: dealCount }, (_, row) => {
      const at = start + Math.floor((row * span) / dealCount);
      return {
        id: `del_benchan${infix}${row.toString(36).padStart(6, '0')}`,
        workspaceId,
        title: `Analytics deal ${row}`,
        stage: dealStages[row % dealStages.length],
        amountMinor: (row * 104_729) % 10_000_000,
        currency: CURRENCIES[row % CURRENCIES.length],
        ownerId: ownerIds[row % ownerIds.length],
        contactIds: '[]',
        version: 1,
        createdAt: at,
        updatedAt: at,
      };
    }),
  );
  const { token } = await issuePersonalAccessToken(createPersonalAccessTokenStore(engine), { workspaceId, userId: ownerIds[0]!, scopes: ALL_SCOPES });
  const day = (at: number) => new Date(at).toISOString().slice(0, 10);
  return { workspaceId, taskCount, dealCount, token, firstDay: day(start), lastDay: day(start + span - 1) };
}
