import { scopeCatalogue } from '../../generated/work-platform/rules.js';
// Small factories for the Work-Platform store tests: a workspace, its users and tokens, built
// through the stores themselves so that every fixture passes the same checks as real data.
import type { StoreSource } from '../../src/store/engine.js';
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

export async function makeWorkspace(
  source: StoreSource,
  options: { name?: string; plan?: WorkspacePlan; now?: () => number } = {},
): Promise<WorkspaceFixture> {
  const clock = options.now ? { now: options.now } : {};
  const { id: workspaceId } = await createWorkspaceStore(source, clock).createWorkspace({ name: options.name ?? 'Test workspace', plan: options.plan ?? 'free' });
  const ownerId = await makeUser(source, workspaceId, 'owner', options.now);
  return { workspaceId, ownerId, actor: { id: ownerId, kind: 'USER' } };
}

export async function makeUser(source: StoreSource, workspaceId: string, role: WorkspaceRole = 'member', now?: () => number): Promise<string> {
  return (await createUserStore(source, now ? { now } : {}).createUser({ workspaceId, role, name: `Test ${role}` })).id;
}

export async function makeToken(
  source: StoreSource,
  workspace: WorkspaceFixture,
  options: { scopes?: readonly string[]; expiresAt?: number | null; now?: () => number } = {},
): Promise<{ id: string; token: string }> {
  return issuePersonalAccessToken(createPersonalAccessTokenStore(source, options.now ? { now: options.now } : {}), {
    workspaceId: workspace.workspaceId,
    userId: workspace.ownerId,
    scopes: options.scopes ?? scopeCatalogue,
    expiresAt: options.expiresAt ?? null,
  });
}
