import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { oauthAdapterFactory } from '../../src/auth/oauth/oauthAdapter.js';
import { oauthSecretHash } from '../../src/auth/oauth/oauthCredentials.js';
import { createOauthClientStore } from '../../src/store/oauthClients.js';
import { createOauthRecordStore, type OauthRecordInput } from '../../src/store/oauthRecords.js';
import { createUserStore } from '../../src/store/users.js';
import { makeClock, makeDatabase, type TempDatabase } from './factories.js';
import { makeUser, makeWorkspace, type WorkspaceFixture } from './workPlatformFactories.js';

let t: TempDatabase;
let workspace: WorkspaceFixture;
let clientId: string;
const clock = makeClock(1_800_000_000_000);

beforeEach(async () => {
  t = makeDatabase();
  workspace = await makeWorkspace(t.db);
  clientId = (await createOauthClientStore(t.db).createOauthClient({
    workspaceId: workspace.workspaceId,
    name: 'Client',
    redirectUris: ['https://app.example/cb'],
    scopes: ['tasks:read'],
    secretHash: null,
  })).id;
});
afterEach(() => t.cleanup());

const accessToken = (idHash: string, overrides: Partial<OauthRecordInput> = {}): OauthRecordInput => ({
  model: 'AccessToken',
  idHash,
  payload: JSON.stringify({ scope: 'tasks:read', aud: 'https://api.example/v1' }),
  grantId: 'grant-1',
  clientId,
  accountId: workspace.ownerId,
  uid: null,
  expiresAt: clock.now() + 60_000,
  ...overrides,
});

describe('oauth record store', () => {
  it('finds unexpired records only, marks consumption, and purges what has expired', async () => {
    const store = createOauthRecordStore(t.db, { now: clock.now });
    await store.save(accessToken('a'));
    await store.save({ ...accessToken('b'), model: 'AuthorizationCode', expiresAt: clock.now() + 1000 });
    expect(await store.find('AccessToken', 'a')).toEqual({ payload: accessToken('a').payload, consumedAt: null });
    expect(await store.find('AuthorizationCode', 'a')).toBeUndefined();
    await store.consume('AuthorizationCode', 'b');
    expect((await store.find('AuthorizationCode', 'b'))?.consumedAt).toBe(clock.now());
    // Saving again replaces the payload and keeps the consumption.
    await store.save({ ...accessToken('b'), model: 'AuthorizationCode', payload: '{"v":2}', expiresAt: clock.now() + 1000 });
    expect(await store.find('AuthorizationCode', 'b')).toEqual({ payload: '{"v":2}', consumedAt: clock.now() });
    clock.advance(1000);
    expect(await store.find('AuthorizationCode', 'b')).toBeUndefined();
    expect(await store.purgeExpired()).toBe(1);
    expect(t.db.prepare('SELECT model, id_hash FROM oauth_records').all()).toEqual([{ model: 'AccessToken', id_hash: 'a' }]);
  });

  it('revokes by grant, one model at a time, and destroys one record', async () => {
    const store = createOauthRecordStore(t.db, { now: clock.now });
    await store.save(accessToken('a'));
    await store.save(accessToken('b', { grantId: 'grant-2' }));
    await store.save({ ...accessToken('c'), model: 'RefreshToken' });
    await store.revokeByGrantId('AccessToken', 'grant-1');
    expect(await store.find('AccessToken', 'a')).toBeUndefined();
    expect(await store.find('AccessToken', 'b')).toBeDefined();
    expect(await store.find('RefreshToken', 'c')).toBeDefined();
    await store.destroy('RefreshToken', 'c');
    expect(await store.find('RefreshToken', 'c')).toBeUndefined();
  });

  it('reads an access token with its client, its user\'s role in the client\'s workspace and the workspace, in one statement', async () => {
    const store = createOauthRecordStore(t.db, { now: clock.now });
    await store.save(accessToken('a'));
    expect(await store.findAccessTokenCaller('a')).toMatchObject({ clientId, accountId: workspace.ownerId, clientWorkspaceId: workspace.workspaceId, role: 'owner', workspace: { id: workspace.workspaceId } });
    expect(await store.findAccessTokenCaller('missing')).toBeUndefined();

    // A user of another workspace: no role in the client's workspace.
    const other = await makeWorkspace(t.db, { name: 'Other' });
    await store.save(accessToken('b', { accountId: other.ownerId }));
    expect(await store.findAccessTokenCaller('b')).toMatchObject({ role: null });

    // A user who left: no role.
    const leaving = await makeUser(t.db, workspace.workspaceId);
    await store.save(accessToken('c', { accountId: leaving }));
    t.db.prepare('DELETE FROM users WHERE id = ?').run(leaving);
    expect(await store.findAccessTokenCaller('c')).toMatchObject({ role: null });

    // The client deleted: its records go with it.
    await createOauthClientStore(t.db).deleteOauthClient(clientId);
    expect(await store.findAccessTokenCaller('a')).toBeUndefined();
  });

  it('deleting a user deletes what was issued for it', async () => {
    const store = createOauthRecordStore(t.db, { now: clock.now });
    const member = await makeUser(t.db, workspace.workspaceId);
    await store.save(accessToken('a', { accountId: member }));
    await store.save(accessToken('b'));
    await createUserStore(t.db).deleteUser(member);
    expect(await store.find('AccessToken', 'a')).toBeUndefined();
    expect(await store.find('AccessToken', 'b')).toBeDefined();
  });
});

describe('oidc-provider adapter', () => {
  it('stores a record under the SHA-256 of its id, never the id, and gives the id back on find', async () => {
    const adapter = oauthAdapterFactory(createOauthRecordStore(t.db, { now: clock.now }), createOauthClientStore(t.db), clock.now, 1000)('RefreshToken');
    const id = 'R'.repeat(43);
    await adapter.upsert(id, { jti: id, grantId: 'g1', clientId, accountId: workspace.ownerId, exp: 1 }, 600);
    const rows = t.db.prepare('SELECT * FROM oauth_records').all() as Record<string, unknown>[];
    expect(rows).toEqual([
      expect.objectContaining({ model: 'RefreshToken', id_hash: oauthSecretHash(id), grant_id: 'g1', client_id: clientId, account_id: workspace.ownerId, expires_at: clock.now() + 600_000 }),
    ]);
    expect(JSON.stringify(rows)).not.toContain(id);
    expect(await adapter.find(id)).toEqual({ jti: id, grantId: 'g1', clientId, accountId: workspace.ownerId, exp: 1 });
    await adapter.consume(id);
    expect((await adapter.find(id))?.consumed).toBe(Math.floor(clock.now() / 1000));
  });

  it('keeps an interaction without its browser session\'s cookie value, and a grant under its own id', async () => {
    const factory = oauthAdapterFactory(createOauthRecordStore(t.db, { now: clock.now }), createOauthClientStore(t.db), clock.now, 1000);
    await factory('Interaction').upsert('uid1', { jti: 'uid1', params: { client_id: clientId }, session: { accountId: workspace.ownerId, cookie: 'secret-session-id', uid: 'u' } }, 600);
    await factory('Grant').upsert('grant-9', { jti: 'grant-9', clientId, accountId: workspace.ownerId }, 600);
    const stored = JSON.stringify(t.db.prepare('SELECT * FROM oauth_records').all());
    expect(stored).not.toContain('secret-session-id');
    expect(t.db.prepare("SELECT grant_id, client_id FROM oauth_records WHERE model = 'Grant'").get()).toEqual({ grant_id: 'grant-9', client_id: clientId });
    expect(t.db.prepare("SELECT client_id, account_id FROM oauth_records WHERE model = 'Interaction'").get()).toEqual({ client_id: clientId, account_id: workspace.ownerId });
  });

  it('serves clients from oauth_clients as oidc-provider metadata, the secret as its hash', async () => {
    const clients = createOauthClientStore(t.db);
    const confidential = await clients.createOauthClient({ workspaceId: workspace.workspaceId, name: 'C', redirectUris: ['https://c.example/cb'], scopes: ['tasks:read'], secretHash: 'a'.repeat(64) });
    const adapter = oauthAdapterFactory(createOauthRecordStore(t.db), clients, clock.now, 1000)('Client');
    expect(await adapter.find(clientId)).toMatchObject({ client_id: clientId, token_endpoint_auth_method: 'none', redirect_uris: ['https://app.example/cb'] });
    expect(await adapter.find(clientId)).not.toHaveProperty('client_secret');
    expect(await adapter.find(confidential.id)).toMatchObject({ token_endpoint_auth_method: 'client_secret_basic', client_secret: 'a'.repeat(64) });
    expect(await adapter.find('ocl_unknown')).toBeUndefined();
    await expect(adapter.upsert('x', {})).rejects.toThrow(/admin CLI/);
  });
});
