// Stored answers of POST requests sent with an Idempotency-Key: within 24 hours a repeat of the
// key in the same workspace gets the original 2xx answer again instead of acting twice. Only 2xx
// answers are stored. The HTTP layer runs look-up, action (resource + outbox row) and save in one
// BEGIN IMMEDIATE transaction (runInImmediateTransaction), so a concurrent duplicate, in this
// process or another one on the same database, waits for the lock and then finds the record.
import type BetterSqlite3 from 'better-sqlite3';
import { StoreError } from './errors.js';

/** How long a stored answer is replayed: 24 hours per key and workspace. */
export const idempotencyWindowMs = 24 * 60 * 60 * 1000;

/** A key is 1 to 255 printable ASCII characters (space to tilde). */
export const idempotencyKeyPattern = /^[\x20-\x7E]{1,255}$/;

export interface IdempotencyRecord {
  workspaceId: string;
  key: string;
  /** The method and path of the request that stored the answer (a reuse elsewhere is a conflict). */
  method: string;
  path: string;
  status: number;
  /** Response headers to replay, e.g. Location and ETag. */
  headers: Record<string, string>;
  /** The response body exactly as sent. */
  body: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
  expiresAt: number;
}

export interface SaveIdempotencyRecordInput {
  workspaceId: string;
  key: string;
  method: string;
  path: string;
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Milliseconds since the epoch; the record expires `idempotencyWindowMs` later. */
  now: number;
}

export interface IdempotencyKeyStore {
  /** The live record of a key, or undefined (never stored, or expired). */
  findIdempotencyRecord(workspaceId: string, key: string, now: number): IdempotencyRecord | undefined;
  /** Stores a 2xx answer; an expired record of the same key is replaced, a live one is an error. */
  saveIdempotencyRecord(input: SaveIdempotencyRecordInput): IdempotencyRecord;
  /** Deletes every expired record; returns how many. Run on a schedule. */
  purgeExpiredIdempotencyKeys(now: number): number;
}

export function createIdempotencyKeyStore(db: BetterSqlite3.Database): IdempotencyKeyStore {
  // Every keyed POST looks its key up twice and stores its answer: run on the connection directly.
  const findLive = db.prepare<{ workspaceId: string; key: string; now: number }, Omit<IdempotencyRecord, 'headers'> & { headers: string }>(
    `SELECT workspace_id AS workspaceId, key, method, path, status, headers, body, created_at AS createdAt, expires_at AS expiresAt
       FROM idempotency_keys WHERE workspace_id = @workspaceId AND key = @key AND expires_at > @now`,
  );
  // Only an expired record may be replaced.
  const upsert = db.prepare<Omit<IdempotencyRecord, 'headers'> & { headers: string }>(
    `INSERT INTO idempotency_keys (workspace_id, key, method, path, status, headers, body, created_at, expires_at)
     VALUES (@workspaceId, @key, @method, @path, @status, @headers, @body, @createdAt, @expiresAt)
     ON CONFLICT (workspace_id, key) DO UPDATE SET
       method = excluded.method, path = excluded.path, status = excluded.status, headers = excluded.headers,
       body = excluded.body, created_at = excluded.created_at, expires_at = excluded.expires_at
     WHERE idempotency_keys.expires_at <= excluded.created_at`,
  );
  const purge = db.prepare<{ now: number }>('DELETE FROM idempotency_keys WHERE expires_at <= @now');

  return {
    findIdempotencyRecord(workspaceId, key, now) {
      const row = findLive.get({ workspaceId, key, now });
      return row ? { ...row, headers: JSON.parse(row.headers) as Record<string, string> } : undefined;
    },

    saveIdempotencyRecord(input) {
      if (!Number.isInteger(input.status) || input.status < 200 || input.status > 299) {
        throw new StoreError('invalid_argument', `Only 2xx answers are stored for idempotency keys; got ${input.status}.`);
      }
      if (!idempotencyKeyPattern.test(input.key)) {
        throw new StoreError('invalid_argument', 'An idempotency key is 1 to 255 printable ASCII characters.');
      }
      const record: IdempotencyRecord = {
        workspaceId: input.workspaceId,
        key: input.key,
        method: input.method,
        path: input.path,
        status: input.status,
        headers: { ...input.headers },
        body: input.body,
        createdAt: input.now,
        expiresAt: input.now + idempotencyWindowMs,
      };
      const { changes } = upsert.run({ ...record, headers: JSON.stringify(record.headers) });
      if (changes === 0) {
        throw new StoreError('invalid_argument', `The idempotency key "${input.key}" already has a stored answer in this workspace.`);
      }
      return record;
    },

    purgeExpiredIdempotencyKeys(now) {
      return purge.run({ now }).changes;
    },
  };
}
