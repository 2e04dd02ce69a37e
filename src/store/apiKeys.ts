import { asc, eq, sql } from 'drizzle-orm';
import { apiKeys, tenants } from '../../db/schema.js';
import { placeholdersFor } from './drizzle.js';
import { engineOf, type StoreSource } from './engine.js';
import { StoreError } from './errors.js';
import { defaultRandomBytes, newId, type RandomBytes } from './ids.js';

/** What is stored of a key: its lowercase hex SHA-256 (src/auth/apiKeyFormat.ts makes keys and hashes). */
const keyHashPattern = /^[0-9a-f]{64}$/;

export type ApiKeyState = 'active' | 'revoked' | 'expired';

/** What authentication needs to know about a presented key. */
export interface ApiKeyRecord {
  id: string;
  tenantId: string;
  /** Milliseconds since the epoch; null when the key never expires. */
  expiresAt: number | null;
  /** Milliseconds since the epoch; null while the key is not revoked. */
  revokedAt: number | null;
  /** The key's own allowance per rate-limit window; null means the server default. */
  rateLimit: number | null;
}

/** A key as listed to an operator: never the key or its hash. */
export interface ApiKeySummary {
  id: string;
  tenantId: string;
  prefix: string;
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
  rateLimit: number | null;
  state: ApiKeyState;
}

export interface CreateApiKeyInput {
  tenantId: string;
  /** The key's SHA-256 in lowercase hex; the key itself is never stored. */
  keyHash: string;
  /** The key's first characters, shown when keys are listed. */
  keyPrefix: string;
  /** Milliseconds since the epoch; omitted or null for a key that never expires. */
  expiresAt?: number | null;
  /** Requests per rate-limit window for this key; omitted or null for the server default. */
  rateLimit?: number | null;
}

export interface ApiKeyStoreOptions {
  now?: () => number;
  randomBytes?: RandomBytes;
}

export interface ApiKeyStore {
  /** Stores a key by its hash. */
  createApiKey(input: CreateApiKeyInput): Promise<{ id: string }>;
  /** The hot path of every authenticated request: one compiled statement. */
  findApiKeyByHash(keyHash: string): Promise<ApiKeyRecord | undefined>;
  /** Revokes a key; revoking a revoked key is a no-op that returns the original time. */
  revokeApiKey(id: string): Promise<{ id: string; revokedAt: number }>;
  listApiKeys(tenantId: string): Promise<ApiKeySummary[]>;
}

/** Revocation wins over expiry; a key expires at the instant `expiresAt`. */
export function apiKeyState(key: Pick<ApiKeyRecord, 'expiresAt' | 'revokedAt'>, now: number): ApiKeyState {
  if (key.revokedAt !== null) return 'revoked';
  if (key.expiresAt !== null && key.expiresAt <= now) return 'expired';
  return 'active';
}

type KeyRow = [id: string, tenantId: string, expiresAt: number | null, revokedAt: number | null, rateLimit: number | null];

export function createApiKeyStore(source: StoreSource, options: ApiKeyStoreOptions = {}): ApiKeyStore {
  const now = options.now ?? Date.now;
  const randomBytes = options.randomBytes ?? defaultRandomBytes;
  const engine = engineOf(source);
  const { orm } = engine;

  // Rows as arrays: this runs on every authenticated request.
  const findByHash = engine.statement<unknown, { keyHash: string }, KeyRow>(
    orm
      .select({ id: apiKeys.id, tenantId: apiKeys.tenantId, expiresAt: apiKeys.expiresAt, revokedAt: apiKeys.revokedAt, rateLimit: apiKeys.rateLimit })
      .from(apiKeys)
      .where(eq(apiKeys.keyHash, sql.placeholder('keyHash'))),
  );
  const tenantExists = engine.statement<unknown, { tenantId: string }>(
    orm.select({ id: tenants.id }).from(tenants).where(eq(tenants.id, sql.placeholder('tenantId'))),
  );
  const insertKey = engine.statement<unknown, typeof apiKeys.$inferInsert>(orm.insert(apiKeys).values(placeholdersFor(apiKeys)));
  const selectRevokedAt = engine.statement<unknown, { id: string }, [revokedAt: number | null]>(
    orm.select({ revokedAt: apiKeys.revokedAt }).from(apiKeys).where(eq(apiKeys.id, sql.placeholder('id'))),
  );
  const revoke = engine.statement<unknown, { id: string; revokedAt: number }>(
    orm
      .update(apiKeys)
      .set({ revokedAt: sql`${sql.placeholder('revokedAt')}` })
      .where(eq(apiKeys.id, sql.placeholder('id'))),
  );
  const selectSummaries = engine.statement<Omit<ApiKeySummary, 'state'>, { tenantId: string }>(
    orm
      .select({
        id: apiKeys.id,
        tenantId: apiKeys.tenantId,
        prefix: apiKeys.keyPrefix,
        createdAt: apiKeys.createdAt,
        expiresAt: apiKeys.expiresAt,
        revokedAt: apiKeys.revokedAt,
        rateLimit: apiKeys.rateLimit,
      })
      .from(apiKeys)
      .where(eq(apiKeys.tenantId, sql.placeholder('tenantId')))
      .orderBy(asc(apiKeys.createdAt), asc(apiKeys.id)),
  );

  return {
    async createApiKey({ tenantId, keyHash, keyPrefix, expiresAt = null, rateLimit = null }) {
      if (!keyHashPattern.test(keyHash)) throw new StoreError('invalid_argument', 'keyHash must be a lowercase hex SHA-256.');
      if (expiresAt !== null && !Number.isSafeInteger(expiresAt)) {
        throw new StoreError('invalid_argument', 'expiresAt must be a whole number of milliseconds since the epoch.');
      }
      if (rateLimit !== null && (!Number.isSafeInteger(rateLimit) || rateLimit < 1)) {
        throw new StoreError('invalid_argument', 'rateLimit must be a positive integer.');
      }
      const id = newId('key', randomBytes);
      const createdAt = now();
      await engine.write(async () => {
        if (!(await tenantExists.row({ tenantId }))) throw new StoreError('tenant_not_found', `No tenant with id "${tenantId}".`);
        await insertKey.run({ id, tenantId, keyHash, keyPrefix, createdAt, expiresAt, revokedAt: null, rateLimit });
      });
      return { id };
    },

    async findApiKeyByHash(keyHash) {
      const row = await engine.read(() => findByHash.row({ keyHash }));
      return row && { id: row[0], tenantId: row[1], expiresAt: row[2], revokedAt: row[3], rateLimit: row[4] };
    },

    revokeApiKey(id) {
      return engine.write(async () => {
        const existing = await selectRevokedAt.row({ id });
        if (!existing) throw new StoreError('api_key_not_found', `No API key with id "${id}".`);
        if (existing[0] !== null) return { id, revokedAt: existing[0] };
        const revokedAt = now();
        await revoke.run({ id, revokedAt });
        return { id, revokedAt };
      });
    },

    async listApiKeys(tenantId) {
      const at = now();
      const rows = await engine.read(() => selectSummaries.objects({ tenantId }));
      return rows.map((row) => ({ ...row, state: apiKeyState(row, at) }));
    },
  };
}
