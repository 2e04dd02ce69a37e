// Bench data beside the demo set: task workspaces of the given sizes, with limits lifted so the
// load is not cut short by 429s, a token per workspace and a portfolio key without a low allowance.
import type BetterSqlite3 from 'better-sqlite3';
import { createApiKeyStore } from '../../src/store/apiKeys.js';
import { issueApiKey } from '../../src/auth/apiKeys.js';
import { issuePersonalAccessToken } from '../../src/auth/personalAccessTokens.js';
import { createPersonalAccessTokenStore } from '../../src/store/personalAccessTokens.js';
import { createProjectStore } from '../../src/store/projects.js';
import { createUserStore } from '../../src/store/users.js';
import { createWorkspaceStore } from '../../src/store/workspaces.js';
import { dealStages } from '../../db/schema.js';

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

const ALL_SCOPES = ['tasks:read', 'tasks:write', 'projects:read', 'projects:write', 'workspace:read', 'webhooks:manage', 'crm:read', 'analytics:read'];
const LIFTED = 1_000_000_000;
// The largest per-minute override a workspace takes: about 16,700 requests a second, beyond this machine.
const MAX_PER_MINUTE = 1_000_000;
const STATUSES = ['TODO', 'IN_PROGRESS', 'BLOCKED', 'DONE'] as const;
const PRIORITIES = ['LOW', 'MEDIUM', 'HIGH'] as const;

export async function seedBenchData(db: BetterSqlite3.Database, sizes: readonly number[], portfolioTenantId: string): Promise<BenchData> {
  const workspaces = createWorkspaceStore(db);
  const users = createUserStore(db);
  const projects = createProjectStore(db);
  const tokens = createPersonalAccessTokenStore(db);
  const insertTask = db.prepare(
    `INSERT INTO tasks (id, workspace_id, project_id, title, status, priority, priority_rank, due_on, assignee_id, version, created_at, updated_at, completed_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, 1, ?, ?, ?)`,
  );
  const start = Date.UTC(2026, 0, 1);
  const seeded: BenchData['workspaces'] = [];
  for (const [index, size] of sizes.entries()) {
    // Enterprise has no monthly quota; the per-minute allowances are lifted by override.
    const { id: workspaceId } = workspaces.createWorkspace({ name: `Bench ${size} tasks`, plan: 'enterprise' });
    workspaces.setWorkspaceLimits(workspaceId, { readPerMinute: MAX_PER_MINUTE, writePerMinute: MAX_PER_MINUTE, aiPerMinute: MAX_PER_MINUTE });
    const { id: userId } = users.createUser({ workspaceId, role: 'owner', name: 'Bench owner' });
    const projectId = (await projects.createProject(workspaceId, { name: 'Bench project' }, { id: userId, kind: 'USER' })).id;
    db.transaction(() => {
      for (let row = 0; row < size; row += 1) {
        const priority = PRIORITIES[row % 3]!;
        const at = start + row * 1000;
        insertTask.run(
          `tsk_bench${index}x${row.toString(36).padStart(6, '0')}`,
          workspaceId,
          projectId,
          `Bench task ${row}`,
          STATUSES[row % 4],
          priority,
          PRIORITIES.indexOf(priority) + 1,
          row % 5 === 0 ? null : at + 7 * 86_400_000,
          at,
          at,
          STATUSES[row % 4] === 'DONE' ? at : null,
        );
      }
    })();
    const { token } = issuePersonalAccessToken(tokens, { workspaceId, userId, scopes: ALL_SCOPES });
    seeded.push({ workspaceId, projectId, taskCount: size, token, ownerId: userId });
  }
  const { key } = await issueApiKey(createApiKeyStore(db), { tenantId: portfolioTenantId, rateLimit: LIFTED });
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
export async function seedAnalyticsWorkspace(db: BetterSqlite3.Database, taskCount: number, dealCount: number): Promise<AnalyticsBenchWorkspace> {
  const workspaces = createWorkspaceStore(db);
  const users = createUserStore(db);
  const projects = createProjectStore(db);
  const { id: workspaceId } = workspaces.createWorkspace({ name: `Bench analytics`, plan: 'enterprise' });
  workspaces.setWorkspaceLimits(workspaceId, { readPerMinute: MAX_PER_MINUTE, writePerMinute: MAX_PER_MINUTE, aiPerMinute: MAX_PER_MINUTE });
  const ownerIds = Array.from({ length: 4 }, (_, index) => users.createUser({ workspaceId, role: index === 0 ? 'owner' : 'member', name: `Bench user ${index}` }).id);
  const actor = { id: ownerIds[0]!, kind: 'USER' as const };
  const projectIds: string[] = [];
  for (let index = 0; index < 5; index += 1) projectIds.push((await projects.createProject(workspaceId, { name: `Bench analytics ${index}` }, actor)).id);
  const insertTask = db.prepare(
    `INSERT INTO tasks (id, workspace_id, project_id, title, status, priority, priority_rank, due_on, assignee_id, version, created_at, updated_at, completed_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, 1, ?, ?, ?)`,
  );
  const insertDeal = db.prepare(
    `INSERT INTO deals (id, workspace_id, title, stage, amount_minor, currency, owner_id, company_id, contact_ids, expected_close_on, version, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, NULL, '[]', NULL, 1, ?, ?)`,
  );
  const start = Date.UTC(2025, 0, 1);
  const span = 425 * DAY_MS;
  db.transaction(() => {
    for (let row = 0; row < taskCount; row += 1) {
      const at = start + Math.floor((row * span) / taskCount);
      const priority = PRIORITIES[row % 3]!;
      const status = STATUSES[row % 4]!;
      const completedAt = status === 'DONE' ? at + ((row * 7919) % (30 * DAY_MS)) : null;
      insertTask.run(
        `tsk_benchan${row.toString(36).padStart(6, '0')}`,
        workspaceId,
        projectIds[row % projectIds.length],
        `Analytics task ${row}`,
        status,
        priority,
        PRIORITIES.indexOf(priority) + 1,
        row % 5 === 0 ? null : at + (row % 21) * DAY_MS,
        at,
        completedAt ?? at,
        completedAt,
      );
    }
    for (let row = 0; row < dealCount; row += 1) {
      const at = start + Math.floor((row * span) / dealCount);
      insertDeal.run(
        `del_benchan${row.toString(36).padStart(6, '0')}`,
        workspaceId,
        `Analytics deal ${row}`,
        dealStages[row % dealStages.length],
        (row * 104_729) % 10_000_000,
        CURRENCIES[row % CURRENCIES.length],
        ownerIds[row % ownerIds.length],
        at,
        at,
      );
    }
  })();
  const { token } = issuePersonalAccessToken(createPersonalAccessTokenStore(db), { workspaceId, userId: ownerIds[0]!, scopes: ALL_SCOPES });
  const day = (at: number) => new Date(at).toISOString().slice(0, 10);
  return { workspaceId, taskCount, dealCount, token, firstDay: day(start), lastDay: day(start + span - 1) };
}
