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

const ALL_SCOPES = ['tasks:read', 'tasks:write', 'projects:read', 'projects:write', 'workspace:read', 'webhooks:manage'];
const LIFTED = 1_000_000_000;
// The largest per-minute override a workspace takes: about 16,700 requests a second, beyond this machine.
const MAX_PER_MINUTE = 1_000_000;
const STATUSES = ['TODO', 'IN_PROGRESS', 'BLOCKED', 'DONE'] as const;
const PRIORITIES = ['LOW', 'MEDIUM', 'HIGH'] as const;

export function seedBenchData(db: BetterSqlite3.Database, sizes: readonly number[], portfolioTenantId: string): BenchData {
  const workspaces = createWorkspaceStore(db);
  const users = createUserStore(db);
  const projects = createProjectStore(db);
  const tokens = createPersonalAccessTokenStore(db);
  const insertTask = db.prepare(
    `INSERT INTO tasks (id, workspace_id, project_id, title, status, priority, priority_rank, due_on, assignee_id, version, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, 1, ?, ?)`,
  );
  const start = Date.UTC(2026, 0, 1);
  const seeded = sizes.map((size, index) => {
    // Enterprise has no monthly quota; the per-minute allowances are lifted by override.
    const { id: workspaceId } = workspaces.createWorkspace({ name: `Bench ${size} tasks`, plan: 'enterprise' });
    workspaces.setWorkspaceLimits(workspaceId, { readPerMinute: MAX_PER_MINUTE, writePerMinute: MAX_PER_MINUTE, aiPerMinute: MAX_PER_MINUTE });
    const { id: userId } = users.createUser({ workspaceId, role: 'owner', name: 'Bench owner' });
    const projectId = projects.createProject(workspaceId, { name: 'Bench project' }, { id: userId, kind: 'USER' }).id;
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
        );
      }
    })();
    const { token } = issuePersonalAccessToken(tokens, { workspaceId, userId, scopes: ALL_SCOPES });
    return { workspaceId, projectId, taskCount: size, token, ownerId: userId };
  });
  const { key } = issueApiKey(createApiKeyStore(db), { tenantId: portfolioTenantId, rateLimit: LIFTED });
  return { workspaces: seeded, portfolioKey: key };
}
