import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreError } from '../../src/store/errors.js';
import { issuePersonalAccessToken } from '../../src/auth/personalAccessTokens.js';
import { hashPersonalAccessToken } from '../../src/auth/patFormat.js';
import { createPersonalAccessTokenStore } from '../../src/store/personalAccessTokens.js';
import { createUserStore } from '../../src/store/users.js';
import { NotFoundError } from '../../src/store/workPlatformErrors.js';
import { createWorkspaceStore } from '../../src/store/workspaces.js';
import { makeClock, makeDatabase, type TempDatabase } from './factories.js';

let t: TempDatabase;
beforeEach(() => {
  t = makeDatabase();
});
afterEach(() => t.cleanup());

describe('workspace store', () => {
  it('creates a workspace with a ten_ id, its plan and no overrides', async () => {
    const store = createWorkspaceStore(t.db, { now: () => 1234 });
    const { id } = await store.createWorkspace({ name: '  Acme  ', plan: 'team' });
    expect(id).toMatch(/^ten_[A-Za-z0-9]{20}$/);
    expect(await store.getWorkspace(id)).toEqual({
      id,
      name: 'Acme',
      plan: 'team',
      createdAt: 1234,
      overrides: { readPerMinute: null, writePerMinute: null, aiPerMinute: null, monthlyQuota: null, aiDailySpendCapCents: null, webhookRetryDelaysSeconds: null },
    });
    expect(await store.getWorkspace('ten_missing')).toBeUndefined();
    expect((await store.createWorkspace({ name: 'Fixed', plan: 'free', id: 'ten_fixed' })).id).toBe('ten_fixed');
  });

  it('refuses an empty name, an unknown plan and a malformed id', async () => {
    const store = createWorkspaceStore(t.db);
    await expect(store.createWorkspace({ name: ' ', plan: 'free' })).rejects.toThrow(StoreError);
    await expect(store.createWorkspace({ name: 'x', plan: 'gold' as never })).rejects.toThrow(/Unknown plan "gold"; use one of free, pro, team, business, enterprise/);
    await expect(store.createWorkspace({ name: 'x', plan: 'free', id: 'wsp_x' })).rejects.toThrow(/Invalid workspace id/);
    expect(t.db.prepare('SELECT count(*) FROM workspaces').pluck().get()).toBe(0);
  });

  it('sets some overrides, keeps the others, clears one with null and all with clear', async () => {
    const store = createWorkspaceStore(t.db);
    const { id } = await store.createWorkspace({ name: 'Limits', plan: 'free' });
    await store.setWorkspaceLimits(id, { readPerMinute: 5, monthlyQuota: 0 });
    const set = await store.setWorkspaceLimits(id, { webhookRetryDelaysSeconds: [10, 60], aiDailySpendCapCents: 42, writePerMinute: undefined });
    expect(set.overrides).toEqual({ readPerMinute: 5, writePerMinute: null, aiPerMinute: null, monthlyQuota: 0, aiDailySpendCapCents: 42, webhookRetryDelaysSeconds: [10, 60] });
    expect(await store.getWorkspace(id)).toEqual(set);

    expect((await store.setWorkspaceLimits(id, { readPerMinute: null })).overrides.readPerMinute).toBeNull();
    const cleared = await store.clearWorkspaceLimits(id);
    expect(Object.values(cleared.overrides).every((value) => value === null)).toBe(true);
    expect(await store.getWorkspace(id)).toEqual(cleared);
  });

  it('refuses out-of-range overrides and changes nothing', async () => {
    const store = createWorkspaceStore(t.db);
    const { id } = await store.createWorkspace({ name: 'Limits', plan: 'pro' });
    const bad: Parameters<typeof store.setWorkspaceLimits>[1][] = [
      { readPerMinute: 0 },
      { writePerMinute: 1.5 },
      { aiPerMinute: 2_000_000 },
      { monthlyQuota: -1 },
      { aiDailySpendCapCents: Number.NaN },
      { webhookRetryDelaysSeconds: [] },
      { webhookRetryDelaysSeconds: [30, 0] },
      { webhookRetryDelaysSeconds: Array.from({ length: 21 }, () => 30) },
      { webhookRetryDelaysSeconds: [8 * 24 * 3600] },
      { colour: 1 } as never,
    ];
    for (const overrides of bad) await expect(store.setWorkspaceLimits(id, overrides), JSON.stringify(overrides)).rejects.toThrow(StoreError);
    expect(Object.values((await store.getWorkspace(id))!.overrides).every((value) => value === null)).toBe(true);
    await expect(store.setWorkspaceLimits('ten_missing', { readPerMinute: 5 })).rejects.toThrow(NotFoundError);
    await expect(store.clearWorkspaceLimits('ten_missing')).rejects.toThrow(/No workspace with id "ten_missing"/);
  });

  it('keeps the plan and override checks in the database too', async () => {
    const { id } = await createWorkspaceStore(t.db).createWorkspace({ name: 'x', plan: 'free' });
    expect(() => t.db.prepare("UPDATE workspaces SET plan = 'gold' WHERE id = ?").run(id)).toThrow(/CHECK/);
    expect(() => t.db.prepare('UPDATE workspaces SET read_per_minute_override = 0 WHERE id = ?').run(id)).toThrow(/CHECK/);
  });
});

describe('user store', () => {
  it('creates users with usr_ ids, a role and optional name and email', async () => {
    const clock = makeClock();
    const { id: workspaceId } = await createWorkspaceStore(t.db).createWorkspace({ name: 'x', plan: 'free' });
    const users = createUserStore(t.db, { now: clock.now });
    const owner = (await users.createUser({ workspaceId, role: 'owner', name: ' Ada ', email: 'ada@example.com' })).id;
    const member = (await users.createUser({ workspaceId, role: 'member' })).id;
    expect(owner).toMatch(/^usr_[A-Za-z0-9]{20}$/);
    expect(await users.getUser(owner)).toEqual({ id: owner, workspaceId, role: 'owner', name: 'Ada', email: 'ada@example.com', createdAt: clock.now(), sessionsValidAfter: 0 });
    expect(await users.getUser(member)).toMatchObject({ role: 'member', name: null, email: null });
    expect(await users.getUser('usr_missing')).toBeUndefined();
  });

  it('reads a user together with its workspace for session authentication', async () => {
    const workspaces = createWorkspaceStore(t.db);
    const { id: workspaceId } = await workspaces.createWorkspace({ name: 'x', plan: 'team' });
    await workspaces.setWorkspaceLimits(workspaceId, { monthlyQuota: 9 });
    const users = createUserStore(t.db);
    const member = (await users.createUser({ workspaceId, role: 'member', name: 'Grace' })).id;
    expect(await users.getUserAndWorkspace(member)).toEqual({ user: (await users.getUser(member)), workspace: (await workspaces.getWorkspace(workspaceId)) });
    expect((await users.getUserAndWorkspace(member))?.workspace).toMatchObject({ plan: 'team', overrides: { monthlyQuota: 9, readPerMinute: null } });
    expect(await users.getUserAndWorkspace('usr_missing')).toBeUndefined();
  });

  it('reads every member of the workspace the same way alone, beside a user and beside a token', async () => {
    const clock = makeClock(4242);
    const workspaces = createWorkspaceStore(t.db, { now: clock.now });
    const { id: workspaceId } = await workspaces.createWorkspace({ name: 'Every value', plan: 'business' });
    const overrides = { readPerMinute: 11, writePerMinute: 12, aiPerMinute: 13, monthlyQuota: 14, aiDailySpendCapCents: 15, webhookRetryDelaysSeconds: [16, 17] };
    const expected = { id: workspaceId, name: 'Every value', plan: 'business', createdAt: 4242, overrides };
    expect(await workspaces.setWorkspaceLimits(workspaceId, overrides)).toEqual(expected);
    expect(await workspaces.getWorkspace(workspaceId)).toEqual(expected);
    const users = createUserStore(t.db);
    const owner = (await users.createUser({ workspaceId, role: 'owner' })).id;
    expect((await users.getUserAndWorkspace(owner))?.workspace).toEqual(expected);
    const { token } = await issuePersonalAccessToken(createPersonalAccessTokenStore(t.db), { workspaceId, userId: owner, scopes: [] });
    expect((await createPersonalAccessTokenStore(t.db).findPatCaller(hashPersonalAccessToken(token)))?.workspace).toEqual(expected);
  });

  it('refuses an unknown workspace, role or a malformed email', async () => {
    const { id: workspaceId } = await createWorkspaceStore(t.db).createWorkspace({ name: 'x', plan: 'free' });
    const users = createUserStore(t.db);
    await expect(users.createUser({ workspaceId: 'ten_missing', role: 'owner' })).rejects.toThrow(NotFoundError);
    await expect(users.createUser({ workspaceId, role: 'guest' as never })).rejects.toThrow(/Unknown role "guest"/);
    await expect(users.createUser({ workspaceId, role: 'admin', email: 'not an email' })).rejects.toThrow(StoreError);
    expect(t.db.prepare('SELECT count(*) FROM users').pluck().get()).toBe(0);
  });
});
