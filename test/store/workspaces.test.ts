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
  it('creates a workspace with a ten_ id, its plan and no overrides', () => {
    const store = createWorkspaceStore(t.db, { now: () => 1234 });
    const { id } = store.createWorkspace({ name: '  Acme  ', plan: 'team' });
    expect(id).toMatch(/^ten_[A-Za-z0-9]{20}$/);
    expect(store.getWorkspace(id)).toEqual({
      id,
      name: 'Acme',
      plan: 'team',
      createdAt: 1234,
      overrides: { readPerMinute: null, writePerMinute: null, aiPerMinute: null, monthlyQuota: null, aiDailySpendCapCents: null, webhookRetryDelaysSeconds: null },
    });
    expect(store.getWorkspace('ten_missing')).toBeUndefined();
    expect(store.createWorkspace({ name: 'Fixed', plan: 'free', id: 'ten_fixed' }).id).toBe('ten_fixed');
  });

  it('refuses an empty name, an unknown plan and a malformed id', () => {
    const store = createWorkspaceStore(t.db);
    expect(() => store.createWorkspace({ name: ' ', plan: 'free' })).toThrow(StoreError);
    expect(() => store.createWorkspace({ name: 'x', plan: 'gold' as never })).toThrow(/Unknown plan "gold"; use one of free, pro, team, business, enterprise/);
    expect(() => store.createWorkspace({ name: 'x', plan: 'free', id: 'wsp_x' })).toThrow(/Invalid workspace id/);
    expect(t.db.prepare('SELECT count(*) FROM workspaces').pluck().get()).toBe(0);
  });

  it('sets some overrides, keeps the others, clears one with null and all with clear', () => {
    const store = createWorkspaceStore(t.db);
    const { id } = store.createWorkspace({ name: 'Limits', plan: 'free' });
    store.setWorkspaceLimits(id, { readPerMinute: 5, monthlyQuota: 0 });
    const set = store.setWorkspaceLimits(id, { webhookRetryDelaysSeconds: [10, 60], aiDailySpendCapCents: 42, writePerMinute: undefined });
    expect(set.overrides).toEqual({ readPerMinute: 5, writePerMinute: null, aiPerMinute: null, monthlyQuota: 0, aiDailySpendCapCents: 42, webhookRetryDelaysSeconds: [10, 60] });
    expect(store.getWorkspace(id)).toEqual(set);

    expect(store.setWorkspaceLimits(id, { readPerMinute: null }).overrides.readPerMinute).toBeNull();
    const cleared = store.clearWorkspaceLimits(id);
    expect(Object.values(cleared.overrides).every((value) => value === null)).toBe(true);
    expect(store.getWorkspace(id)).toEqual(cleared);
  });

  it('refuses out-of-range overrides and changes nothing', () => {
    const store = createWorkspaceStore(t.db);
    const { id } = store.createWorkspace({ name: 'Limits', plan: 'pro' });
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
    for (const overrides of bad) expect(() => store.setWorkspaceLimits(id, overrides), JSON.stringify(overrides)).toThrow(StoreError);
    expect(Object.values(store.getWorkspace(id)!.overrides).every((value) => value === null)).toBe(true);
    expect(() => store.setWorkspaceLimits('ten_missing', { readPerMinute: 5 })).toThrow(NotFoundError);
    expect(() => store.clearWorkspaceLimits('ten_missing')).toThrow(/No workspace with id "ten_missing"/);
  });

  it('keeps the plan and override checks in the database too', () => {
    const { id } = createWorkspaceStore(t.db).createWorkspace({ name: 'x', plan: 'free' });
    expect(() => t.db.prepare("UPDATE workspaces SET plan = 'gold' WHERE id = ?").run(id)).toThrow(/CHECK/);
    expect(() => t.db.prepare('UPDATE workspaces SET read_per_minute_override = 0 WHERE id = ?').run(id)).toThrow(/CHECK/);
  });
});

describe('user store', () => {
  it('creates users with usr_ ids, a role and optional name and email', () => {
    const clock = makeClock();
    const { id: workspaceId } = createWorkspaceStore(t.db).createWorkspace({ name: 'x', plan: 'free' });
    const users = createUserStore(t.db, { now: clock.now });
    const owner = users.createUser({ workspaceId, role: 'owner', name: ' Ada ', email: 'ada@example.com' }).id;
    const member = users.createUser({ workspaceId, role: 'member' }).id;
    expect(owner).toMatch(/^usr_[A-Za-z0-9]{20}$/);
    expect(users.getUser(owner)).toEqual({ id: owner, workspaceId, role: 'owner', name: 'Ada', email: 'ada@example.com', createdAt: clock.now(), sessionsValidAfter: 0 });
    expect(users.getUser(member)).toMatchObject({ role: 'member', name: null, email: null });
    expect(users.getUser('usr_missing')).toBeUndefined();
  });

  it('reads a user together with its workspace for session authentication', () => {
    const workspaces = createWorkspaceStore(t.db);
    const { id: workspaceId } = workspaces.createWorkspace({ name: 'x', plan: 'team' });
    workspaces.setWorkspaceLimits(workspaceId, { monthlyQuota: 9 });
    const users = createUserStore(t.db);
    const member = users.createUser({ workspaceId, role: 'member', name: 'Grace' }).id;
    expect(users.getUserAndWorkspace(member)).toEqual({ user: users.getUser(member), workspace: workspaces.getWorkspace(workspaceId) });
    expect(users.getUserAndWorkspace(member)?.workspace).toMatchObject({ plan: 'team', overrides: { monthlyQuota: 9, readPerMinute: null } });
    expect(users.getUserAndWorkspace('usr_missing')).toBeUndefined();
  });

  it('reads every member of the workspace the same way alone, beside a user and beside a token', () => {
    const clock = makeClock(4242);
    const workspaces = createWorkspaceStore(t.db, { now: clock.now });
    const { id: workspaceId } = workspaces.createWorkspace({ name: 'Every value', plan: 'business' });
    const overrides = { readPerMinute: 11, writePerMinute: 12, aiPerMinute: 13, monthlyQuota: 14, aiDailySpendCapCents: 15, webhookRetryDelaysSeconds: [16, 17] };
    const expected = { id: workspaceId, name: 'Every value', plan: 'business', createdAt: 4242, overrides };
    expect(workspaces.setWorkspaceLimits(workspaceId, overrides)).toEqual(expected);
    expect(workspaces.getWorkspace(workspaceId)).toEqual(expected);
    const users = createUserStore(t.db);
    const owner = users.createUser({ workspaceId, role: 'owner' }).id;
    expect(users.getUserAndWorkspace(owner)?.workspace).toEqual(expected);
    const { token } = issuePersonalAccessToken(createPersonalAccessTokenStore(t.db), { workspaceId, userId: owner, scopes: [] });
    expect(createPersonalAccessTokenStore(t.db).findPatCaller(hashPersonalAccessToken(token))?.workspace).toEqual(expected);
  });

  it('refuses an unknown workspace, role or a malformed email', () => {
    const { id: workspaceId } = createWorkspaceStore(t.db).createWorkspace({ name: 'x', plan: 'free' });
    const users = createUserStore(t.db);
    expect(() => users.createUser({ workspaceId: 'ten_missing', role: 'owner' })).toThrow(NotFoundError);
    expect(() => users.createUser({ workspaceId, role: 'guest' as never })).toThrow(/Unknown role "guest"/);
    expect(() => users.createUser({ workspaceId, role: 'admin', email: 'not an email' })).toThrow(StoreError);
    expect(t.db.prepare('SELECT count(*) FROM users').pluck().get()).toBe(0);
  });
});
