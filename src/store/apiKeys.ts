import type BetterSqlite3 from 'better-sqlite3';
import { asc, eq, sql } from 'drizzle-orm';
import { apiKeys, tenants } from '../../db/schema.js';
import { compiledStatement, drizzleFor } from './drizzle.js';
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
  createApiKey(input: CreateApiKeyInput): { id: string };
  /** The hot path of every authenticated request: one compiled statement. */
  findApiKeyByHash(keyHash: string): ApiKeyRecord | undefined;
  /** Revokes a key; revoking a revoked key is a no-op that returns the original time. */
  revokeApiKey(id: string): { id: string; revokedAt: number };
  listApiKeys(tenantId: string): ApiKeySummary[];
}

/** Revocation wins over expiry; a key expires at the instant `expiresAt`. */
export function apiKeyState(key: Pick<ApiKeyRecord, 'expiresAt' | 'revokedAt'>, now: number): ApiKeyState {
  if (key.revokedAt !== null) return 'revoked';
  if (key.expiresAt !== null && key.expiresAt <= now) return 'expired';
  return 'active';
}

export function createApiKeyStore(db: BetterSqlite3.Database, options: ApiKeyStoreOptions = {}): ApiKeyStore {
  const now = options.now ?? Date.now;
  const randomBytes = options.randomBytes ?? defaultRandomBytes;
  const orm = drizzleFor(db);

  // Compiled, rows as arrays: this runs on every authenticated request.
  const findByHash = compiledStatement<{ keyHash: string }, [string, string, number | null, number | null, number | null]>(
    db,
    orm
      .select({ id: apiKeys.id, tenantId: apiKeys.tenantId, expiresAt: apiKeys.expiresAt, revokedAt: apiKeys.revokedAt, rateLimit: apiKeys.rateLimit })
      .from(apiKeys)
      .where(eq(apiKeys.keyHash, sql.placeholder('keyHash'))),
  );

  return {
    createApiKey({ tenantId, keyHash, keyPrefix, expiresAt = null, rateLimit = null }) {
      if (!keyHashPattern.test(keyHash)) throw new StoreError('invalid_argument', 'keyHash must be a lowercase hex SHA-256.');
      if (expiresAt !== null && !Number.isSafeInteger(expiresAt)) {
        throw new StoreError('invalid_argument', 'expiresAt must be a whole number of milliseconds since the epoch.');
      }
      if (rateLimit !== null && (!Number.isSafeInteger(rateLimit) || rateLimit < 1)) {
        throw new StoreError('invalid_argument', 'rateLimit must be a positive integer.');
      }
      const id = newId('key', randomBytes);
      orm.transaction(
        (tx) => {
          const tenant = tx.select({ id: tenants.id }).from(tenants).where(eq(tenants.id, tenantId)).get();
          if (!tenant) throw new StoreError('tenant_not_found', `No tenant with id "${tenantId}".`);
          tx.insert(apiKeys)
            .values({
              id,
              tenantId,
              keyHash,
              keyPrefix,
              createdAt: now(),
              expiresAt,
              revokedAt: null,
              rateLimit,
            })
            .run();
        },
        { behavior: 'immediate' },
      );
      return { id };
    },

    findApiKeyByHash(keyHash) {
      const row = findByHash.row({ keyHash });
      return row && { id: row[0], tenantId: row[1], expiresAt: row[2], revokedAt: row[3], rateLimit: row[4] };
    },

    revokeApiKey(id) {
      return orm.transaction(
        (tx) => {
          const existing = tx.select({ revokedAt: apiKeys.revokedAt }).from(apiKeys).where(eq(apiKeys.id, id)).get();
          if (!existing) throw new StoreError('api_key_not_found', `No API key with id "${id}".`);
          if (existing.revokedAt !== null) return { id, revokedAt: existing.revokedAt };
          const revokedAt = now();
          tx.update(apiKeys).set({ revokedAt }).where(eq(apiKeys.id, id)).run();
          return { id, revokedAt };
        },
        { behavior: 'immediate' },
      );
    },

    listApiKeys(tenantId) {
      const at = now();
      return orm
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
        .where(eq(apiKeys.tenantId, tenantId))
        .orderBy(asc(apiKeys.createdAt), asc(apiKeys.id))
        .all()
        .map((row) => ({ ...row, state: apiKeyState(row, at) }));
    },
  };
}
