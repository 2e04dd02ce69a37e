import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { apiKeyPattern, apiKeyState, createApiKeyStore, hashApiKey } from '../../src/store/apiKeys.js';
import { StoreError } from '../../src/store/errors.js';
import { makeClock, makeDatabase, makeTenant, type TempDatabase } from './factories.js';

let t: TempDatabase;
let tenantId: string;
beforeEach(() => {
  t = makeDatabase();
  tenantId = makeTenant(t.db);
});
afterEach(() => t.cleanup());

describe('hashApiKey', () => {
  it('is the lowercase hex SHA-256 of the whole key', () => {
    const key = 'pfk_' + 'a'.repeat(43);
    expect(hashApiKey(key)).toBe(createHash('sha256').update(key).digest('hex'));
    expect(hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('api key store', () => {
  it('creates keys in the documented format and stores only the hash and a 12-character prefix', () => {
    const store = createApiKeyStore(t.db);
    const { id, key } = store.createApiKey({ tenantId });
    expect(id).toMatch(/^key_[A-Za-z0-9]+$/);
    expect(key).toMatch(apiKeyPattern);
    expect(key).toMatch(/^pfk_[A-Za-z0-9_-]{43}$/);

    const row = t.db.prepare('SELECT * FROM api_keys WHERE id = ?').get(id) as Record<string, unknown>;
    expect(row.key_hash).toBe(hashApiKey(key));
    expect(row.key_prefix).toBe(key.slice(0, 12));
    for (const value of Object.values(row)) expect(String(value)).not.toContain(key.slice(12));
  });

  it('builds the key from 32 injected random bytes in URL-safe base64', () => {
    const bytes = new Uint8Array(32).fill(0xfb);
    const store = createApiKeyStore(t.db, { randomBytes: (size) => (size === 32 ? bytes : new Uint8Array(size).fill(1)) });
    expect(store.createApiKey({ tenantId }).key).toBe(`pfk_${Buffer.from(bytes).toString('base64url')}`);
  });

  it('finds a key by its hash with its tenant, expiry, revocation and allowance', () => {
    const store = createApiKeyStore(t.db, { now: () => 5000 });
    const { id, key } = store.createApiKey({ tenantId, expiresAt: 90_000, rateLimit: 7 });
    expect(store.findApiKeyByHash(hashApiKey(key))).toEqual({ id, tenantId, expiresAt: 90_000, revokedAt: null, rateLimit: 7 });
    expect(store.findApiKeyByHash(hashApiKey(`${key}x`))).toBeUndefined();
  });

  it('refuses an unknown tenant and invalid arguments', () => {
    const store = createApiKeyStore(t.db);
    expect(() => store.createApiKey({ tenantId: 'ten_missing' })).toThrow(expect.objectContaining({ code: 'tenant_not_found' }));
    expect(() => store.createApiKey({ tenantId, rateLimit: 0 })).toThrow(StoreError);
    expect(() => store.createApiKey({ tenantId, rateLimit: 1.5 })).toThrow(/positive integer/);
    expect(() => store.createApiKey({ tenantId, expiresAt: Number.NaN })).toThrow(StoreError);
    expect(t.db.prepare('SELECT count(*) FROM api_keys').pluck().get()).toBe(0);
  });

  it('revokes once, keeps the first revocation time, and names an unknown id clearly', () => {
    const clock = makeClock(10_000);
    const store = createApiKeyStore(t.db, { now: clock.now });
    const { id, key } = store.createApiKey({ tenantId });
    clock.advance(500);
    expect(store.revokeApiKey(id)).toEqual({ id, revokedAt: 10_500 });
    clock.advance(500);
    expect(store.revokeApiKey(id)).toEqual({ id, revokedAt: 10_500 });
    expect(store.findApiKeyByHash(hashApiKey(key))?.revokedAt).toBe(10_500);
    expect(() => store.revokeApiKey('key_missing')).toThrow(/No API key with id "key_missing"/);
  });

  it('lists a tenant\'s keys with their state and never the key or its hash', () => {
    const clock = makeClock(1_000_000);
    const store = createApiKeyStore(t.db, { now: clock.now });
    const active = store.createApiKey({ tenantId, rateLimit: 30 });
    clock.advance(1);
    const expiring = store.createApiKey({ tenantId, expiresAt: 1_000_100 });
    clock.advance(1);
    const revoked = store.createApiKey({ tenantId, expiresAt: 1_000_050 });
    store.revokeApiKey(revoked.id);
    store.createApiKey({ tenantId: makeTenant(t.db, 'Other') });

    const listed = store.listApiKeys(tenantId);
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
    expect(store.listApiKeys(tenantId).map((key) => key.state)).toEqual(['active', 'expired', 'revoked']);
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
