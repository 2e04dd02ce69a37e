import { roleScopes, scopeCatalogue } from '../../generated/work-platform/rules.js';
import { createUserStore } from '../../src/store/users.js';
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreError } from '../../src/store/errors.js';
import { issuePersonalAccessToken, rotatePersonalAccessToken } from '../../src/auth/personalAccessTokens.js';
import { hashPersonalAccessToken, mintPersonalAccessToken } from '../../src/auth/patFormat.js';
import { createPersonalAccessTokenStore, normalizeScopes, patState } from '../../src/store/personalAccessTokens.js';
import { NotFoundError } from '../../src/store/workPlatformErrors.js';
import { createWorkspaceStore } from '../../src/store/workspaces.js';
import { makeClock, makeDatabase, type TempDatabase } from './factories.js';
import { makeUser, makeWorkspace, type WorkspaceFixture } from './workPlatformFactories.js';

let t: TempDatabase;
let workspace: WorkspaceFixture;
beforeEach(async () => {
  t = makeDatabase();
  workspace = await makeWorkspace(t.db);
});
afterEach(() => t.cleanup());

const patRow = (id: string) => t.db.prepare('SELECT * FROM personal_access_tokens WHERE id = ?').get(id) as Record<string, unknown>;

describe('scope catalogue', () => {
  it("lists the contract's scopes", () => {
    expect(scopeCatalogue).toEqual(['tasks:read', 'tasks:write', 'projects:read', 'projects:write', 'workspace:read', 'webhooks:manage', 'ai:use', 'crm:read', 'crm:write', 'contracts:read', 'contracts:write', 'connectors:read', 'connectors:manage', 'analytics:read']);
  });

  it('normalizes to catalogue order without duplicates and refuses unknown names', () => {
    expect(normalizeScopes(['webhooks:manage', 'tasks:read', 'tasks:read'])).toEqual(['tasks:read', 'webhooks:manage']);
    expect(normalizeScopes([])).toEqual([]);
    expect(() => normalizeScopes(['tasks:read', 'tasks:admin', 'root'])).toThrow(/Unknown scopes "tasks:admin", "root"; known scopes: tasks:read/);
  });
});

describe('personal access token store', () => {
  it('stores an issued token as its hash, a 12-character prefix and the scopes, never the token', async () => {
    const store = createPersonalAccessTokenStore(t.db, { now: () => 5000 });
    const { id, token } = await issuePersonalAccessToken(store, { workspaceId: workspace.workspaceId, userId: workspace.ownerId, scopes: ['tasks:write', 'tasks:read'] });
    expect(id).toMatch(/^pat_[A-Za-z0-9]{20}$/);
    const row = patRow(id);
    expect(row).toMatchObject({
      token_hash: hashPersonalAccessToken(token),
      token_prefix: token.slice(0, 12),
      scopes: '["tasks:read","tasks:write"]',
      created_at: 5000,
      expires_at: null,
      revoked_at: null,
      rotated_to: null,
    });
    for (const value of Object.values(row)) expect(String(value)).not.toContain(token.slice(12));
    expect(row.token_hash).toBe(createHash('sha256').update(token).digest('hex'));
  });

  it('refuses anything but a lowercase hex SHA-256 as the hash, on create and on rotate', async () => {
    const store = createPersonalAccessTokenStore(t.db);
    const { token, tokenPrefix } = mintPersonalAccessToken();
    const { workspaceId, ownerId } = workspace;
    for (const tokenHash of [token, 'AB'.repeat(32), 'ab'.repeat(33)]) {
      await expect(store.createPat({ workspaceId, userId: ownerId, scopes: [], tokenHash, tokenPrefix })).rejects.toThrow(/tokenHash must be a lowercase hex SHA-256/);
    }
    const { id } = await issuePersonalAccessToken(store, { workspaceId, userId: ownerId, scopes: [] });
    await expect(store.rotatePat(id, { tokenHash: token, tokenPrefix })).rejects.toThrow(/tokenHash must be a lowercase hex SHA-256/);
    expect(t.db.prepare('SELECT count(*) FROM personal_access_tokens WHERE revoked_at IS NULL').pluck().get()).toBe(1);
  });

  it('finds a token by its hash with its workspace, user, scopes, expiry and revocation', async () => {
    const store = createPersonalAccessTokenStore(t.db);
    const { id, token } = await issuePersonalAccessToken(store, { workspaceId: workspace.workspaceId, userId: workspace.ownerId, scopes: ['projects:read'], expiresAt: 90_000 });
    expect(await store.findPatCaller(hashPersonalAccessToken(token))).toMatchObject({
      id,
      workspaceId: workspace.workspaceId,
      userId: workspace.ownerId,
      scopes: ['projects:read'],
      expiresAt: 90_000,
      revokedAt: null,
    });
    expect(await store.findPatCaller(hashPersonalAccessToken(`${token}x`))).toBeUndefined();
  });

  it('finds a token for authentication with its user\'s role and its workspace in one read, each time anew', async () => {
    const store = createPersonalAccessTokenStore(t.db, { now: () => 7000 });
    const workspaces = createWorkspaceStore(t.db);
    await workspaces.setWorkspaceLimits(workspace.workspaceId, { readPerMinute: 5, webhookRetryDelaysSeconds: [5, 60] });
    const { id, token } = await issuePersonalAccessToken(store, { workspaceId: workspace.workspaceId, userId: workspace.ownerId, scopes: ['tasks:read'] });
    expect(await store.findPatCaller(hashPersonalAccessToken(token))).toEqual({
      id,
      workspaceId: workspace.workspaceId,
      userId: workspace.ownerId,
      scopes: ['tasks:read'],
      expiresAt: null,
      revokedAt: null,
      role: 'owner',
      workspace: (await workspaces.getWorkspace(workspace.workspaceId)),
    });
    expect((await store.findPatCaller(hashPersonalAccessToken(token)))?.workspace?.overrides).toMatchObject({ readPerMinute: 5, webhookRetryDelaysSeconds: [5, 60] });
    expect(await store.findPatCaller(hashPersonalAccessToken(`${token}x`))).toBeUndefined();

    await store.revokePat(id);
    expect(await store.findPatCaller(hashPersonalAccessToken(token))).toMatchObject({ id, revokedAt: 7000, role: 'owner' });
    // The foreign keys rule both out; the look-up still says so when the rows disagree.
    t.db.pragma('foreign_keys = OFF');
    const other = await makeWorkspace(t.db, { name: 'Other' });
    t.db.prepare('UPDATE users SET workspace_id = ? WHERE id = ?').run(other.workspaceId, workspace.ownerId);
    expect(await store.findPatCaller(hashPersonalAccessToken(token))).toMatchObject({ id, role: null, workspace: { id: workspace.workspaceId } });
    t.db.prepare('DELETE FROM workspaces WHERE id = ?').run(workspace.workspaceId);
    expect(await store.findPatCaller(hashPersonalAccessToken(token))).toMatchObject({ id, role: null, workspace: undefined });
  });

  it('refuses unknown scopes, a missing workspace and a user of another workspace, writing nothing', async () => {
    const store = createPersonalAccessTokenStore(t.db);
    const other = await makeWorkspace(t.db, { name: 'Other' });
    const { workspaceId, ownerId } = workspace;
    await expect(issuePersonalAccessToken(store, { workspaceId, userId: ownerId, scopes: ['tasks:delete'] })).rejects.toThrow(StoreError);
    await expect(issuePersonalAccessToken(store, { workspaceId: 'ten_missing', userId: ownerId, scopes: [] })).rejects.toThrow(expect.objectContaining({ code: 'workspace-not-found' }));
    await expect(issuePersonalAccessToken(store, { workspaceId, userId: other.ownerId, scopes: [] })).rejects.toThrow(expect.objectContaining({ code: 'user-not-found' }));
    await expect(issuePersonalAccessToken(store, { workspaceId, userId: ownerId, scopes: [], expiresAt: 1.5 })).rejects.toThrow(StoreError);
    expect(t.db.prepare('SELECT count(*) FROM personal_access_tokens').pluck().get()).toBe(0);
  });

  it("refuses a scope the user's role may not hold (x-role-scopes), naming it, and writes nothing", async () => {
    const store = createPersonalAccessTokenStore(t.db);
    const memberId = await makeUser(t.db, workspace.workspaceId, 'member');
    const refused = issuePersonalAccessToken(store, { workspaceId: workspace.workspaceId, userId: memberId, scopes: ['tasks:read', 'webhooks:manage', 'workspace:read'] });
    await expect(refused).rejects.toThrow(StoreError);
    await expect(refused).rejects.toThrow(/member, whose role may not hold workspace:read, webhooks:manage/);
    expect(t.db.prepare('SELECT count(*) FROM personal_access_tokens').pluck().get()).toBe(0);
    const allowed = roleScopes.member;
    await expect(issuePersonalAccessToken(store, { workspaceId: workspace.workspaceId, userId: memberId, scopes: allowed })).resolves.toMatchObject({ id: expect.stringMatching(/^pat_/) });
  });

  it("rotates a demoted user's token into one with only the scopes of its role now", async () => {
    const store = createPersonalAccessTokenStore(t.db);
    const adminId = await makeUser(t.db, workspace.workspaceId, 'admin');
    const { id } = await issuePersonalAccessToken(store, { workspaceId: workspace.workspaceId, userId: adminId, scopes: ['tasks:read', 'webhooks:manage'] });
    await createUserStore(t.db).setUserRole(adminId, 'member');
    const rotated = await rotatePersonalAccessToken(store, id);
    expect(await store.findPatCaller(hashPersonalAccessToken(rotated.token))).toMatchObject({ scopes: ['tasks:read'], role: 'member' });
  });

  it('keeps the token in its user\'s workspace in the database as well', async () => {
    const other = await makeWorkspace(t.db, { name: 'Other' });
    expect(() =>
      t.db
        .prepare("INSERT INTO personal_access_tokens (id, workspace_id, user_id, token_hash, token_prefix, scopes, created_at) VALUES ('pat_x', ?, ?, 'h', 'p', '[]', 1)")
        .run(workspace.workspaceId, other.ownerId),
    ).toThrow(/FOREIGN KEY/);
  });

  it('revokes once and keeps the first revocation time', async () => {
    const clock = makeClock(10_000);
    const store = createPersonalAccessTokenStore(t.db, { now: clock.now });
    const { id, token } = await issuePersonalAccessToken(store, { workspaceId: workspace.workspaceId, userId: workspace.ownerId, scopes: [] });
    clock.advance(500);
    expect(await store.revokePat(id)).toEqual({ id, revokedAt: 10_500 });
    clock.advance(500);
    expect(await store.revokePat(id)).toEqual({ id, revokedAt: 10_500 });
    expect((await store.findPatCaller(hashPersonalAccessToken(token)))?.revokedAt).toBe(10_500);
    await expect(store.revokePat('pat_missing')).rejects.toThrow(NotFoundError);
  });

  it('rotates: a new token with the same user, scopes and expiry, the old one revoked and pointing to it', async () => {
    const clock = makeClock(10_000);
    const store = createPersonalAccessTokenStore(t.db, { now: clock.now });
    const member = await makeUser(t.db, workspace.workspaceId, 'member');
    const old = await issuePersonalAccessToken(store, { workspaceId: workspace.workspaceId, userId: member, scopes: ['tasks:read', 'projects:read'], expiresAt: 99_000 });
    clock.advance(1000);
    const rotated = await rotatePersonalAccessToken(store, old.id);
    expect(rotated.id).not.toBe(old.id);
    expect(rotated.token).toMatch(/^svc_pat_[A-Za-z0-9_-]{43}$/);
    expect(rotated.token).not.toBe(old.token);
    expect(await store.findPatCaller(hashPersonalAccessToken(rotated.token))).toMatchObject({
      id: rotated.id,
      workspaceId: workspace.workspaceId,
      userId: member,
      scopes: ['tasks:read', 'projects:read'],
      expiresAt: 99_000,
      revokedAt: null,
    });
    expect((await store.findPatCaller(hashPersonalAccessToken(old.token)))?.revokedAt).toBe(11_000);
    expect(patRow(old.id).rotated_to).toBe(rotated.id);
    await expect(rotatePersonalAccessToken(store, old.id)).rejects.toThrow(/is revoked; only an active token can be rotated/);
    await expect(rotatePersonalAccessToken(store, 'pat_missing')).rejects.toThrow(NotFoundError);
  });

  it('refuses to rotate an expired token, and rotates in one transaction (nothing changes when it fails)', async () => {
    const clock = makeClock(10_000);
    const store = createPersonalAccessTokenStore(t.db, { now: clock.now });
    const expiring = await issuePersonalAccessToken(store, { workspaceId: workspace.workspaceId, userId: workspace.ownerId, scopes: [], expiresAt: 10_500 });
    clock.advance(500);
    await expect(rotatePersonalAccessToken(store, expiring.id)).rejects.toThrow(/is expired/);

    const active = await issuePersonalAccessToken(store, { workspaceId: workspace.workspaceId, userId: workspace.ownerId, scopes: [] });
    t.db.exec("CREATE TRIGGER fail_revoke BEFORE UPDATE OF revoked_at ON personal_access_tokens BEGIN SELECT RAISE(ABORT, 'boom'); END");
    await expect(rotatePersonalAccessToken(store, active.id)).rejects.toThrow(/boom/);
    expect(t.db.prepare('SELECT count(*) FROM personal_access_tokens').pluck().get()).toBe(2);
    expect(patRow(active.id).revoked_at).toBeNull();
  });

  it('lists a workspace\'s tokens with their state and never the token or its hash', async () => {
    const clock = makeClock(1_000_000);
    const store = createPersonalAccessTokenStore(t.db, { now: clock.now });
    const { workspaceId, ownerId } = workspace;
    const active = await issuePersonalAccessToken(store, { workspaceId, userId: ownerId, scopes: ['tasks:read'] });
    clock.advance(1);
    const expiring = await issuePersonalAccessToken(store, { workspaceId, userId: ownerId, scopes: [], expiresAt: 1_000_100 });
    clock.advance(1);
    const rotated = await rotatePersonalAccessToken(store, active.id);
    await makeWorkspace(t.db, { name: 'Other' });
    clock.advance(200);
    const listed = await store.listPats(workspaceId);
    expect(listed.map((pat) => [pat.id, pat.state, pat.rotatedTo])).toEqual([
      [active.id, 'revoked', rotated.id],
      [expiring.id, 'expired', null],
      [rotated.id, 'active', null],
    ]);
    expect(listed[0]).toEqual({
      id: active.id,
      workspaceId,
      userId: ownerId,
      scopes: ['tasks:read'],
      prefix: active.token.slice(0, 12),
      createdAt: 1_000_000,
      expiresAt: null,
      revokedAt: 1_000_002,
      rotatedTo: rotated.id,
      state: 'revoked',
    });
    expect(JSON.stringify(listed)).not.toContain(hashPersonalAccessToken(active.token));
    expect(await store.listPats('ten_missing')).toEqual([]);
  });

  it('says revoked before expired, and expired from the instant expiresAt', () => {
    expect(patState({ expiresAt: null, revokedAt: null }, 5)).toBe('active');
    expect(patState({ expiresAt: 5, revokedAt: null }, 4)).toBe('active');
    expect(patState({ expiresAt: 5, revokedAt: null }, 5)).toBe('expired');
    expect(patState({ expiresAt: 5, revokedAt: 1 }, 9)).toBe('revoked');
  });
});
