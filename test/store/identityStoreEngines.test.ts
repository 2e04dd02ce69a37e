// The identity stores' behaviour on both engines: workspaces, users, personal access tokens, OAuth
// clients and OAuth records do on PostgreSQL what they do on SQLite, through the same code.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { oauthRecords, personalAccessTokens, tasks, projects } from '../../db/schema.js';
import { issuePersonalAccessToken, rotatePersonalAccessToken } from '../../src/auth/personalAccessTokens.js';
import { hashPersonalAccessToken } from '../../src/auth/patFormat.js';
import type { StoreEngine } from '../../src/store/engine.js';
import { createConnectorStore } from '../../src/store/connectors.js';
import { createOauthClientStore } from '../../src/store/oauthClients.js';
import { createOauthRecordStore, type OauthRecordInput } from '../../src/store/oauthRecords.js';
import { createPersonalAccessTokenStore } from '../../src/store/personalAccessTokens.js';
import { createUserStore } from '../../src/store/users.js';
import { NotFoundError } from '../../src/store/workPlatformErrors.js';
import { createWorkspaceStore } from '../../src/store/workspaces.js';
import { storeEngines, type OpenedEngine } from '../support/engines.js';
import { makeToken, makeUser, makeWorkspace, type WorkspaceFixture } from './workPlatformFactories.js';

describe.each(storeEngines)('identity stores on $name', (engineCase) => {
  let opened: OpenedEngine;
  let engine: StoreEngine;
  let at: number;
  const now = () => at;

  beforeEach(async () => {
    opened = await engineCase.open({ retryDelayMs: () => 0 });
    engine = opened.engine;
    at = Date.UTC(2026, 10, 23, 9, 41);
  });
  afterEach(() => opened.close());

  it('creates a workspace, reads it, sets and clears its overrides, and refuses a second workspace with the same id', async () => {
    const workspaces = createWorkspaceStore(engine, { now });
    const { id } = await workspaces.createWorkspace({ name: '  Acme  ', plan: 'team' });
    const noOverrides = { readPerMinute: null, writePerMinute: null, aiPerMinute: null, monthlyQuota: null, aiDailySpendCapCents: null, webhookRetryDelaysSeconds: null };
    expect(await workspaces.getWorkspace(id)).toEqual({ id, name: 'Acme', plan: 'team', overrides: noOverrides, createdAt: at });
    expect(await workspaces.getWorkspace('ten_missing')).toBeUndefined();

    const set = await workspaces.setWorkspaceLimits(id, { monthlyQuota: 1_000_000_000_000, webhookRetryDelaysSeconds: [30, 600] });
    expect(set.overrides).toEqual({ ...noOverrides, monthlyQuota: 1_000_000_000_000, webhookRetryDelaysSeconds: [30, 600] });
    // Only the given members change; null clears one.
    const changed = await workspaces.setWorkspaceLimits(id, { readPerMinute: 5, monthlyQuota: null });
    expect(changed.overrides).toEqual({ ...noOverrides, readPerMinute: 5, webhookRetryDelaysSeconds: [30, 600] });
    expect(await workspaces.getWorkspace(id)).toEqual(changed);
    expect((await workspaces.clearWorkspaceLimits(id)).overrides).toEqual(noOverrides);
    await expect(workspaces.setWorkspaceLimits('ten_missing', { readPerMinute: 5 })).rejects.toBeInstanceOf(NotFoundError);

    await workspaces.createWorkspace({ name: 'Fixed', plan: 'free', id: 'ten_fixed' });
    await expect(workspaces.createWorkspace({ name: 'Again', plan: 'pro', id: 'ten_fixed' })).rejects.toThrow();
    expect((await workspaces.getWorkspace('ten_fixed'))?.name).toBe('Fixed');
  });

  it('creates users in existing workspaces only, reads a user with its workspace, and revokes its sessions', async () => {
    const workspace = await makeWorkspace(engine, { now });
    const users = createUserStore(engine, { now });
    const { id } = await users.createUser({ workspaceId: workspace.workspaceId, role: 'admin', name: ' Ada ', email: 'ada@example.com' });
    const user = { id, workspaceId: workspace.workspaceId, role: 'admin', name: 'Ada', email: 'ada@example.com', createdAt: at, sessionsValidAfter: 0 };
    expect(await users.getUser(id)).toEqual(user);
    const both = await users.getUserAndWorkspace(id);
    expect(both).toEqual({ user, workspace: await createWorkspaceStore(engine).getWorkspace(workspace.workspaceId) });
    expect(await users.getUserAndWorkspace('usr_missing')).toBeUndefined();
    await expect(users.createUser({ workspaceId: 'ten_missing', role: 'owner' })).rejects.toBeInstanceOf(NotFoundError);

    at += 1500;
    const revoked = await users.revokeSessions(id);
    expect(revoked.sessionsValidAfter).toBe((Math.floor(at / 1000) + 1) * 1000);
    expect((await users.getUser(id))?.sessionsValidAfter).toBe(revoked.sessionsValidAfter);
    await expect(users.revokeSessions('usr_missing')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('deletes a user with its tokens and OAuth records, and refuses while a task is assigned to it', async () => {
    const workspace = await makeWorkspace(engine, { now });
    const memberId = await makeUser(engine, workspace.workspaceId, 'member', now);
    const users = createUserStore(engine, { now });
    const pats = createPersonalAccessTokenStore(engine, { now });
    const token = await issuePersonalAccessToken(pats, { workspaceId: workspace.workspaceId, userId: memberId, scopes: ['tasks:read'] });
    await createOauthRecordStore(engine, { now }).save(record('AccessToken', 'member-token', { accountId: memberId }));
    await engine.write(async () => {
      await engine.statement(engine.orm.insert(projects).values({ id: 'prj_1', workspaceId: workspace.workspaceId, name: 'P', status: 'ACTIVE', version: 1, createdAt: at, updatedAt: at })).run({});
      await engine.statement(
        engine.orm.insert(tasks).values({
          id: 'tsk_1', workspaceId: workspace.workspaceId, projectId: 'prj_1', title: 'T', status: 'TODO', priority: 'LOW', priorityRank: 1,
          assigneeId: memberId, version: 1, createdAt: at, updatedAt: at,
        }),
      ).run({});
    });
    await expect(users.deleteUser(memberId)).rejects.toThrow(/1 task is assigned to/);
    expect(await pats.findPatCaller(hashPersonalAccessToken(token.token))).toBeDefined();

    await engine.write(() => engine.statement(engine.orm.delete(tasks)).run({}));
    const connectorStore = createConnectorStore(engine, { now });
    const membersConnector = await connectorStore.createConnector(workspace.workspaceId, { kind: 'github', name: "The member's" }, { kind: 'USER', id: memberId });
    const othersConnector = await connectorStore.createConnector(workspace.workspaceId, { kind: 'github', name: "The owner's" }, workspace.actor);
    expect(await users.deleteUser(memberId)).toEqual({ id: memberId, workspaceId: workspace.workspaceId, flagged: { webhooks: [], connectors: [membersConnector.id] } });
    const listed = (creatorRemoved: 0 | 1) =>
      connectorStore.listConnectors(workspace.workspaceId, { sort: 'createdAt', order: 'asc', limit: 10, creatorRemoved }).then((page) => page.items.map((item) => item.id));
    expect(await listed(1)).toEqual([membersConnector.id]);
    expect(await listed(0)).toEqual([othersConnector.id]);
    expect(await users.getUser(memberId)).toBeUndefined();
    // The foreign key cascade took the token; the store took the OAuth records.
    expect(await engine.statement(engine.orm.select({ id: personalAccessTokens.id }).from(personalAccessTokens)).rows({})).toHaveLength(0);
    expect(await engine.statement(engine.orm.select({ idHash: oauthRecords.idHash }).from(oauthRecords)).rows({})).toHaveLength(0);
    await expect(users.deleteUser(memberId)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('issues a token and finds its caller by hash, revokes it once, expires it, rotates it, and lists tokens oldest first', async () => {
    const workspace = await makeWorkspace(engine, { now });
    const pats = createPersonalAccessTokenStore(engine, { now });
    const issued = await makeToken(engine, workspace, { scopes: ['tasks:write', 'tasks:read'], now });
    const caller = await pats.findPatCaller(hashPersonalAccessToken(issued.token));
    expect(caller).toEqual({
      id: issued.id,
      workspaceId: workspace.workspaceId,
      userId: workspace.ownerId,
      scopes: ['tasks:read', 'tasks:write'],
      expiresAt: null,
      revokedAt: null,
      role: 'owner',
      workspace: await createWorkspaceStore(engine).getWorkspace(workspace.workspaceId),
    });
    expect(await pats.findPatCaller('0'.repeat(64))).toBeUndefined();

    at += 1000;
    const revoked = await pats.revokePat(issued.id);
    expect(revoked).toEqual({ id: issued.id, revokedAt: at });
    at += 1000;
    expect(await pats.revokePat(issued.id)).toEqual(revoked);
    await expect(pats.revokePat('pat_missing')).rejects.toBeInstanceOf(NotFoundError);

    const expiring = await makeToken(engine, workspace, { expiresAt: at + 1000, now });
    expect((await pats.findPatCaller(hashPersonalAccessToken(expiring.token)))?.expiresAt).toBe(at + 1000);
    at += 1000;
    await expect(rotatePersonalAccessToken(pats, expiring.id)).rejects.toThrow(/is expired/);

    at += 1000;
    const active = await makeToken(engine, workspace, { scopes: ['projects:read'], now });
    at += 1000;
    const rotated = await rotatePersonalAccessToken(pats, active.id);
    expect(await pats.findPatCaller(hashPersonalAccessToken(rotated.token))).toMatchObject({ id: rotated.id, scopes: ['projects:read'], revokedAt: null });
    const listed = await pats.listPats(workspace.workspaceId);
    expect(listed.map((token) => [token.id, token.state, token.rotatedTo])).toEqual([
      [issued.id, 'revoked', null],
      [expiring.id, 'expired', null],
      [active.id, 'revoked', rotated.id],
      [rotated.id, 'active', null],
    ]);
    expect(listed[0]).toMatchObject({ scopes: ['tasks:read', 'tasks:write'], prefix: issued.token.slice(0, 12), createdAt: Date.UTC(2026, 10, 23, 9, 41) });
  });

  it('refuses a second token with the same hash', async () => {
    const workspace = await makeWorkspace(engine, { now });
    const pats = createPersonalAccessTokenStore(engine, { now });
    const tokenHash = 'a'.repeat(64);
    await pats.createPat({ workspaceId: workspace.workspaceId, userId: workspace.ownerId, scopes: [], tokenHash, tokenPrefix: 'svc_pat_aaaa' });
    await expect(pats.createPat({ workspaceId: workspace.workspaceId, userId: workspace.ownerId, scopes: [], tokenHash, tokenPrefix: 'svc_pat_aaaa' })).rejects.toThrow();
    expect(await pats.listPats(workspace.workspaceId)).toHaveLength(1);
  });

  it('revoking or rotating one token from two instances at once (PostgreSQL) or two requests (SQLite): one revocation time, one replacement', async () => {
    const workspace = await makeWorkspace(engine, { now });
    // On SQLite a second connection of the same process would wait for the first's lock while blocking the thread it needs to commit: one engine, two stores.
    const another = engineCase.name === 'PostgreSQL' ? await opened.openAnother() : engine;
    const here = createPersonalAccessTokenStore(engine, { now });
    const there = createPersonalAccessTokenStore(another, { now: () => at + 5 });

    const { id } = await makeToken(engine, workspace, { now });
    const [first, second] = await Promise.all([here.revokePat(id), there.revokePat(id)]);
    expect(first).toEqual(second);

    const active = await makeToken(engine, workspace, { now });
    const results = await Promise.allSettled([rotatePersonalAccessToken(here, active.id), rotatePersonalAccessToken(there, active.id)]);
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    expect(results.find((result) => result.status === 'rejected')?.reason).toMatchObject({ message: expect.stringMatching(/is revoked/) });
    expect((await here.listPats(workspace.workspaceId)).filter((token) => token.state === 'active')).toHaveLength(1);
  });

  const record = (model: string, idHash: string, overrides: Partial<OauthRecordInput> = {}): OauthRecordInput => ({
    model,
    idHash,
    payload: JSON.stringify({ scope: 'tasks:read' }),
    grantId: 'grant-1',
    clientId: 'ocl_client',
    accountId: null,
    uid: null,
    expiresAt: at + 60_000,
    ...overrides,
  });

  it('registers an OAuth client, keeps its records, finds an access token with its caller, and deletes the client with its records', async () => {
    const workspace = await makeWorkspace(engine, { now });
    const clients = createOauthClientStore(engine, { now });
    const records = createOauthRecordStore(engine, { now });
    await clients.createOauthClient({
      id: 'ocl_client',
      workspaceId: workspace.workspaceId,
      name: 'Client',
      redirectUris: ['https://app.example/cb', 'https://app.example/cb'],
      scopes: ['tasks:write', 'tasks:read'],
      secretHash: 'b'.repeat(64),
    });
    const client = { id: 'ocl_client', workspaceId: workspace.workspaceId, name: 'Client', redirectUris: ['https://app.example/cb'], scopes: ['tasks:read', 'tasks:write'], secretHash: 'b'.repeat(64), createdAt: at };
    expect(await clients.getOauthClient('ocl_client')).toEqual(client);
    expect(await clients.listOauthClients(workspace.workspaceId)).toEqual([client]);
    await expect(clients.createOauthClient({ ...client, workspaceId: 'ten_missing', id: 'ocl_other' })).rejects.toBeInstanceOf(NotFoundError);

    await records.save(record('AccessToken', 'token', { accountId: workspace.ownerId }));
    expect(await records.findAccessTokenCaller('token')).toEqual({
      payload: record('AccessToken', 'token').payload,
      expiresAt: at + 60_000,
      clientId: 'ocl_client',
      accountId: workspace.ownerId,
      clientWorkspaceId: workspace.workspaceId,
      role: 'owner',
      workspace: await createWorkspaceStore(engine).getWorkspace(workspace.workspaceId),
    });

    // A replaced record keeps its consumption; a record is found until it expires, by key or by uid.
    await records.save(record('AuthorizationCode', 'code', { expiresAt: at + 1000 }));
    await records.consume('AuthorizationCode', 'code');
    await records.save(record('AuthorizationCode', 'code', { payload: '{"v":2}', expiresAt: at + 1000 }));
    expect(await records.find('AuthorizationCode', 'code')).toEqual({ payload: '{"v":2}', consumedAt: at });
    await records.save(record('Session', 'session', { uid: 'uid-1', grantId: null, expiresAt: null }));
    expect(await records.findByUid('Session', 'uid-1')).toEqual({ payload: record('Session', 'session').payload, consumedAt: null });
    at += 1000;
    expect(await records.find('AuthorizationCode', 'code')).toBeUndefined();
    expect(await records.purgeExpired()).toBe(1);

    await records.save(record('RefreshToken', 'refresh'));
    await records.revokeByGrantId('RefreshToken', 'grant-1');
    expect(await records.find('RefreshToken', 'refresh')).toBeUndefined();
    expect(await records.find('AccessToken', 'token')).toBeDefined();
    await records.destroy('Session', 'session');
    expect(await records.findByUid('Session', 'uid-1')).toBeUndefined();

    expect(await clients.deleteOauthClient('ocl_client')).toEqual({ id: 'ocl_client', deletedRecords: 1 });
    expect(await records.findAccessTokenCaller('token')).toBeUndefined();
    expect(await clients.getOauthClient('ocl_client')).toBeUndefined();
    await expect(clients.deleteOauthClient('ocl_client')).rejects.toBeInstanceOf(NotFoundError);
  });
});
