import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashApiKey, mintApiKey } from '../../src/auth/apiKeyFormat.js';
import { apiKeyState, createApiKeyStore, type ApiKeyStore, type CreateApiKeyInput } from '../../src/store/apiKeys.js';
import { StoreError } from '../../src/store/errors.js';
import { makeClock, makeDatabase, makeTenant, type TempDatabase } from './factories.js';

let t: TempDatabase;
let tenantId: string;
beforeEach(async () => {
  t = makeDatabase();
  tenantId = await makeTenant(t.db);
});
afterEach(() => t.cleanup());

/** Stores a newly minted key; returns its id and the key, which the store never sees. */
async function storeKey(store: ApiKeyStore, input: Omit<CreateApiKeyInput, 'keyHash' | 'keyPrefix'>): Promise<{ id: string; key: string }> {
  const { key, keyHash, keyPrefix } = mintApiKey();
  return { id: (await store.createApiKey({ ...input, keyHash, keyPrefix })).id, key };
}

describe('api key store', () => {
  it('stores the hash and the prefix it is given under a new key_ id', async () => {
    const store = createApiKeyStore(t.db);
    const keyHash = 'ab'.repeat(32);
    const { id } = await store.createApiKey({ tenantId, keyHash, keyPrefix: 'pfk_abcdefgh' });
    expect(id).toMatch(/^key_[A-Za-z0-9]+$/);
    const row = t.db.prepare('SELECT * FROM api_keys WHERE id = ?').get(id) as Record<string, unknown>;
    expect(row).toMatchObject({ tenant_id: tenantId, key_hash: keyHash, key_prefix: 'pfk_abcdefgh' });
  });

  it('refuses anything but a lowercase hex SHA-256 as the hash, so a key itself is never stored', async () => {
    const store = createApiKeyStore(t.db);
    const { key } = mintApiKey();
    for (const keyHash of [key, 'AB'.repeat(32), 'ab'.repeat(31), '']) {
      await expect(store.createApiKey({ tenantId, keyHash, keyPrefix: key.slice(0, 12) })).rejects.toThrow(/keyHash must be a lowercase hex SHA-256/);
    }
    expect(t.db.prepare('SELECT count(*) FROM api_keys').pluck().get()).toBe(0);
  });

  it('finds a key by its hash with its tenant, expiry, revocation and allowance', async () => {
    const store = createApiKeyStore(t.db, { now: () => 5000 });
    const { id, key } = await storeKey(store, { tenantId, expiresAt: 90_000, rateLimit: 7 });
    expect(await store.findApiKeyByHash(hashApiKey(key))).toEqual({ id, tenantId, expiresAt: 90_000, revokedAt: null, rateLimit: 7 });
    expect(await store.findApiKeyByHash(hashApiKey(`${key}x`))).toBeUndefined();
  });

  it('refuses an unknown tenant and invalid arguments', async () => {
    const store = createApiKeyStore(t.db);
    await expect(storeKey(store, { tenantId: 'ten_missing' })).rejects.toThrow(expect.objectContaining({ code: 'tenant_not_found' }));
    await expect(storeKey(store, { tenantId, rateLimit: 0 })).rejects.toThrow(StoreError);
    await expect(storeKey(store, { tenantId, rateLimit: 1.5 })).rejects.toThrow(/positive integer/);
    await expect(storeKey(store, { tenantId, expiresAt: Number.NaN })).rejects.toThrow(StoreError);
    expect(t.db.prepare('SELECT count(*) FROM api_keys').pluck().get()).toBe(0);
  });

  it('revokes once, keeps the first revocation time, and names an unknown id clearly', async () => {
    const clock = makeClock(10_000);
    const store = createApiKeyStore(t.db, { now: clock.now });
    const { id, key } = await storeKey(store, { tenantId });
    clock.advance(500);
    expect(await store.revokeApiKey(id)).toEqual({ id, revokedAt: 10_500 });
    clock.advance(500);
    expect(await store.revokeApiKey(id)).toEqual({ id, revokedAt: 10_500 });
    expect((await store.findApiKeyByHash(hashApiKey(key)))?.revokedAt).toBe(10_500);
    await expect(store.revokeApiKey('key_missing')).rejects.toThrow(/No API key with id "key_missing"/);
  });

  it('lists a tenant\'s keys with their state and never the key or its hash', async () => {
    const clock = makeClock(1_000_000);
    const store = createApiKeyStore(t.db, { now: clock.now });
    const active = await storeKey(store, { tenantId, rateLimit: 30 });
    clock.advance(1);
    const expiring = await storeKey(store, { tenantId, expiresAt: 1_000_100 });
    clock.advance(1);
    const revoked = await storeKey(store, { tenantId, expiresAt: 1_000_050 });
    await store.revokeApiKey(revoked.id);
    await storeKey(store, { tenantId: await makeTenant(t.db, 'Other') });

    const listed = await store.listApiKeys(tenantId);
    expect(listed.map((key) => [key.id, key.state])).toEqual([
      [active.id, 'active'],
      [expiring.id, 'active'],
      [revoked.id, 'revoked'],
    ]);
    expect(listed[0]).toEqual({
      id: active.id,
      tenantId,
      prefix: active.key.slice(0, 12),
      createdAt: 1_000_000,
      expiresAt: null,
      revokedAt: null,
      rateLimit: 30,
      state: 'active',
    });
    const text = JSON.stringify(listed);
    for (const key of [active, expiring, revoked]) {
      expect(text).not.toContain(key.key);
      expect(text).not.toContain(hashApiKey(key.key));
    }

    clock.set(1_000_100); // expiry is inclusive: the key stops at expiresAt
    expect((await store.listApiKeys(tenantId)).map((key) => key.state)).toEqual(['active', 'expired', 'revoked']);
  });
});

describe('apiKeyState', () => {
  it('lets revocation win over expiry', () => {
    expect(apiKeyState({ expiresAt: 10, revokedAt: 5 }, 20)).toBe('revoked');
    expect(apiKeyState({ expiresAt: 10, revokedAt: null }, 10)).toBe('expired');
    expect(apiKeyState({ expiresAt: 10, revokedAt: null }, 9)).toBe('active');
    expect(apiKeyState({ expiresAt: null, revokedAt: null }, 9)).toBe('active');
  });
});
