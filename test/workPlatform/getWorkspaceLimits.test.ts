import { describe, expect, it, vi } from 'vitest';
import { createWorkspaceStore } from '../../src/store/workspaces.js';
import { createUserStore } from '../../src/store/users.js';
import type { ContractClient } from '../support/contractClient.js';
import { bearer, type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { demoUsers, expectProblem, expectSuccess, makePat, makeSession, makeTestWorkspace } from '../support/workPlatform.js';

// Rate limits and the quota in force are the shared suite's (test/shared/workPlatformLimits.test.ts); this is the report.
const windowMs = 60_000;
// The server's clock runs with real time (session tokens are signed with it) until a test sets it ahead.
let clock = Date.now();
let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, client, fx } = app), { liftCallLimits: true, now: () => Math.max(clock, Date.now()) });

/** Moves the clock 10 s into the next rate-limit window, so each test starts with full buckets. */
function nextWindow(): void {
  const now = Date.now();
  clock = now - (now % windowMs) + windowMs + 10_000;
}

const listTasks = (token: string) => client.get('/v1/tasks?limit=1', bearer(token));

describe('GET /v1/workspace/limits by role and scope', () => {
  const limits = (token: string) => client.get('/v1/workspace/limits', bearer(token));

  it('answers the owner and an admin by session with 200', async () => {
    const owner = await limits(fx.tokens.session);
    expect(owner.status).toBe(200);
    expect(owner.body.workspaceId).toBe(fx.workspaceId);
    const admin = await limits(makeSession(t.sessionSecret, { userId: demoUsers.admin.id, workspaceId: fx.workspaceId }));
    expect(admin.status).toBe(200);
  });

  it("answers a member 403 insufficient-role, by session and by a PAT minted while the member was an admin", async () => {
    const refused = expectProblem(await limits(fx.tokens.memberSession), 403, 'insufficient-role');
    expect(refused).toMatchObject({ requiredRoles: ['owner', 'admin'], heldRoles: ['member'] });
    const { id: userId } = await createUserStore(t.store).createUser({ workspaceId: fx.workspaceId, role: 'admin', name: 'Soon a member' });
    const adminPat = await makePat(t.store, fx.workspaceId, ['workspace:read'], { userId });
    expect((await limits(adminPat)).status).toBe(200);
    // A role change holds within the credential cache's bound (docs/operations.md: at once on SQLite, within a second
    // on PostgreSQL, where its NOTIFY drops the kept caller).
    const withinTheBound = { timeout: 3_000, interval: 25 };
    await createUserStore(t.store).setUserRole(userId, 'member');
    await vi.waitFor(async () => expect(expectProblem(await limits(adminPat), 403, 'insufficient-role')).toMatchObject({ heldRoles: ['member'] }), withinTheBound);
    // A promotion gives the token back what it was granted.
    await createUserStore(t.store).setUserRole(userId, 'admin');
    await vi.waitFor(async () => expect((await limits(adminPat)).status).toBe(200), withinTheBound);
  });
});

it('GET /v1/workspace/limits reports every value: in force, plan default, override, and calls this month', async () => {
  nextWindow();
  const workspace = await makeTestWorkspace(t.store, t.sessionSecret, { plan: 'pro', now: () => clock });
  await createWorkspaceStore(t.store).setWorkspaceLimits(workspace.workspaceId, {
    readPerMinute: 500,
    monthlyQuota: 40,
    aiDailySpendCapCents: 0,
    webhookRetryDelaysSeconds: [10, 60],
  });
  for (let call = 0; call < 2; call++) await listTasks(workspace.pat);
  const report = await client.get('/v1/workspace/limits', bearer(workspace.pat));
  const month = new Date(clock);
  expect(expectSuccess(report, 200)).toEqual({
    workspaceId: workspace.workspaceId,
    plan: 'pro',
    tier: 'pro',
    rateLimits: {
      windowMs,
      read: { inForce: 500, planDefault: 1200, override: 500 },
      write: { inForce: 300, planDefault: 300, override: null },
      ai: { inForce: 60, planDefault: 60, override: null },
    },
    // The report itself is a PAT call: the third.
    monthlyQuota: { inForce: 40, planDefault: 100_000, override: 40, usedThisMonth: 3, resetAt: new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 1)).toISOString() },
    aiDailySpendCapCents: { inForce: 0, planDefault: 5000, override: 0, usedTodayCents: 0, resetAt: new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth(), month.getUTCDate() + 1)).toISOString() },
    webhookRetryDelaysSeconds: { inForce: [10, 60], planDefault: [30, 120, 600, 1800, 7200, 28800, 86400], override: [10, 60] },
  });
  expect(report.headers['x-quota-remaining']).toBe('37');
});

