// The credential formats of both APIs: what a key or token looks like, what is stored of it, and
// how it is issued (minted here, only its hash handed to the store).
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { apiKeyPattern, hashApiKey, mintApiKey } from '../../src/auth/apiKeyFormat.js';
import { authenticateApiKey, issueApiKey } from '../../src/auth/apiKeys.js';
import { hashPersonalAccessToken, mintPersonalAccessToken, personalAccessTokenPattern } from '../../src/auth/patFormat.js';
import { issuePersonalAccessToken, rotatePersonalAccessToken } from '../../src/auth/personalAccessTokens.js';
import { createApiKeyStore } from '../../src/store/apiKeys.js';
import { createPersonalAccessTokenStore } from '../../src/store/personalAccessTokens.js';
import { makeDatabase, makeTenant, type TempDatabase } from '../store/factories.js';
import { makeWorkspace } from '../store/workPlatformFactories.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const injected = (fill: number) => (size: number) => new Uint8Array(size).fill(fill);

describe('API key format', () => {
  it('mints pfk_ and 32 random bytes in URL-safe base64, with its SHA-256 and 12-character prefix', () => {
    const minted = mintApiKey(injected(0xfb));
    expect(minted.key).toBe(`pfk_${Buffer.alloc(32, 0xfb).toString('base64url')}`);
    expect(minted.key).toMatch(apiKeyPattern);
    expect(minted.keyHash).toBe(sha256(minted.key));
    expect(minted.keyPrefix).toBe(minted.key.slice(0, 12));
    expect(mintApiKey().key).not.toBe(mintApiKey().key);
  });

  it('hashes the whole key as lowercase hex SHA-256', () => {
    const key = 'pfk_' + 'a'.repeat(43);
    expect(hashApiKey(key)).toBe(sha256(key));
    expect(hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('matches only the documented form', () => {
    expect(apiKeyPattern.test('pfk_' + 'a'.repeat(43))).toBe(true);
    for (const text of ['pfk_' + 'a'.repeat(42), 'pfk_' + 'a'.repeat(44), 'pfx_' + 'a'.repeat(43), 'pfk_' + 'a'.repeat(42) + '+']) {
      expect(apiKeyPattern.test(text)).toBe(false);
    }
  });
});

describe('personal access token format', () => {
  it('mints svc_pat_ and 32 random bytes in URL-safe base64, with its SHA-256 and 12-character prefix', () => {
    const minted = mintPersonalAccessToken(injected(0xfb));
    expect(minted.token).toBe(`svc_pat_${Buffer.alloc(32, 0xfb).toString('base64url')}`);
    expect(minted.token).toMatch(personalAccessTokenPattern);
    expect(minted.tokenHash).toBe(sha256(minted.token));
    expect(hashPersonalAccessToken(minted.token)).toBe(minted.tokenHash);
    expect(minted.tokenPrefix).toBe(minted.token.slice(0, 12));
  });

  it('matches only the documented form', () => {
    expect(personalAccessTokenPattern.test('svc_pat_' + 'A'.repeat(43))).toBe(true);
    for (const text of ['svc_pat_' + 'A'.repeat(42), 'svc_pa_' + 'A'.repeat(43), 'svc_pat_' + 'A'.repeat(42) + '/']) {
      expect(personalAccessTokenPattern.test(text)).toBe(false);
    }
  });
});

describe('issuing', () => {
  let t: TempDatabase;
  beforeEach(() => {
    t = makeDatabase();
  });
  afterEach(() => t.cleanup());

  it('issues an API key that authenticates, with only its hash and prefix in the database', async () => {
    const tenantId = await makeTenant(t.db);
    const keys = createApiKeyStore(t.db);
    const { id, key } = await issueApiKey(keys, { tenantId, rateLimit: 9 }, injected(0x11));
    expect(key).toBe(`pfk_${Buffer.alloc(32, 0x11).toString('base64url')}`);
    const row = t.db.prepare('SELECT * FROM api_keys WHERE id = ?').get(id) as Record<string, unknown>;
    expect(row).toMatchObject({ key_hash: sha256(key), key_prefix: key.slice(0, 12) });
    for (const value of Object.values(row)) expect(String(value)).not.toContain(key.slice(12));
    expect(await authenticateApiKey(`Bearer ${key}`, keys.findApiKeyByHash, Date.now())).toEqual({ keyId: id, tenantId, rateLimit: 9 });
  });

  it('issues and rotates personal access tokens, storing only their hashes', () => {
    const workspace = makeWorkspace(t.db);
    const pats = createPersonalAccessTokenStore(t.db);
    const first = issuePersonalAccessToken(pats, { workspaceId: workspace.workspaceId, userId: workspace.ownerId, scopes: ['tasks:read'] }, injected(0x22));
    expect(first.token).toBe(`svc_pat_${Buffer.alloc(32, 0x22).toString('base64url')}`);
    const rotated = rotatePersonalAccessToken(pats, first.id);
    expect(rotated.token).toMatch(personalAccessTokenPattern);
    expect(pats.findPatCaller(sha256(rotated.token))).toMatchObject({ id: rotated.id, scopes: ['tasks:read'], revokedAt: null });
    expect(pats.findPatCaller(sha256(first.token))?.revokedAt).not.toBeNull();
    const stored = JSON.stringify(t.db.prepare('SELECT * FROM personal_access_tokens').all());
    for (const token of [first.token, rotated.token]) expect(stored).not.toContain(token.slice(12));
  });
});
