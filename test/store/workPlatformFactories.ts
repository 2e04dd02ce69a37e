import { scopeCatalogue } from '../../generated/work-platform/rules.js';
// Small factories for the Work-Platform store tests: a workspace, its users and tokens, built
// through the stores themselves so that every fixture passes the same checks as real data.
import type BetterSqlite3 from 'better-sqlite3';
import type { EventActor } from '../../src/store/outboxEvents.js';
import { issuePersonalAccessToken } from '../../src/auth/personalAccessTokens.js';
import { createPersonalAccessTokenStore } from '../../src/store/personalAccessTokens.js';
import { createUserStore, type WorkspaceRole } from '../../src/store/users.js';
import { createWorkspaceStore, type WorkspacePlan } from '../../src/store/workspaces.js';

export interface WorkspaceFixture {
  workspaceId: string;
  ownerId: string;
  actor: EventActor;
}

export function makeWorkspace(
  db: BetterSqlite3.Database,
  options: { name?: string; plan?: WorkspacePlan; now?: () => number } = {},
): WorkspaceFixture {
  const clock = options.now ? { now: options.now } : {};
  const { id: workspaceId } = createWorkspaceStore(db, clock).createWorkspace({ name: options.name ?? 'Test workspace', plan: options.plan ?? 'free' });
  const ownerId = makeUser(db, workspaceId, 'owner', options.now);
  return { workspaceId, ownerId, actor: { id: ownerId, kind: 'USER' } };
}

export function makeUser(db: BetterSqlite3.Database, workspaceId: string, role: WorkspaceRole = 'member', now?: () => number): string {
  return createUserStore(db, now ? { now } : {}).createUser({ workspaceId, role, name: `Test ${role}` }).id;
}

export function makeToken(
  db: BetterSqlite3.Database,
  workspace: WorkspaceFixture,
  options: { scopes?: readonly string[]; expiresAt?: number | null; now?: () => number } = {},
): { id: string; token: string } {
  return issuePersonalAccessToken(createPersonalAccessTokenStore(db, options.now ? { now: options.now } : {}), {
    workspaceId: workspace.workspaceId,
    userId: workspace.ownerId,
    scopes: options.scopes ?? scopeCatalogue,
    expiresAt: options.expiresAt ?? null,
  });
}
