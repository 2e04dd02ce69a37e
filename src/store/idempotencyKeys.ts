// Stored answers of POST requests sent with an Idempotency-Key: within 24 hours a repeat of the
// key in the same workspace gets the original 2xx answer again instead of acting twice. Only 2xx
// answers are stored. The HTTP layer (src/idempotency/idempotentCalls.ts) runs action (resource +
// outbox row) and save in one write transaction, so a concurrent duplicate, in this process or
// another one on the same database, fails to save, rolls back and then finds the record.
import { and, eq, gt, lte, sql } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import { idempotencyKeys } from '../../db/schema.js';
import { engineOf, type StoreSource } from './engine.js';
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
  findIdempotencyRecord(workspaceId: string, key: string, now: number): Promise<IdempotencyRecord | undefined>;
  /** Stores a 2xx answer; an expired record of the same key is replaced, a live one is an error. */
  saveIdempotencyRecord(input: SaveIdempotencyRecordInput): Promise<IdempotencyRecord>;
  /** Deletes every expired record; returns how many. Run on a schedule. */
  purgeExpiredIdempotencyKeys(now: number): Promise<number>;
}

/** The value the insert proposed for `column`, in an upsert's DO UPDATE. */
const excluded = (column: SQLiteColumn) => sql.raw(`excluded."${column.name}"`);

type StoredRow = [method: string, path: string, status: number, headers: string, body: string, createdAt: number, expiresAt: number];

export function createIdempotencyKeyStore(source: StoreSource): IdempotencyKeyStore {
  const engine = engineOf(source);
  const { orm } = engine;
  // Every keyed POST looks its key up once and stores its answer: statements read as arrays.
  const findLive = engine.statement<unknown, { workspaceId: string; key: string; now: number }, StoredRow>(
    orm
      .select({
        method: idempotencyKeys.method,
        path: idempotencyKeys.path,
        status: idempotencyKeys.status,
        headers: idempotencyKeys.headers,
        body: idempotencyKeys.body,
        createdAt: idempotencyKeys.createdAt,
        expiresAt: idempotencyKeys.expiresAt,
      })
      .from(idempotencyKeys)
      .where(
        and(
          eq(idempotencyKeys.workspaceId, sql.placeholder('workspaceId')),
          eq(idempotencyKeys.key, sql.placeholder('key')),
          gt(idempotencyKeys.expiresAt, sql.placeholder('now')),
        ),
      ),
  );
  // Only an expired record may be replaced.
  const upsert = engine.statement<unknown, Omit<IdempotencyRecord, 'headers'> & { headers: string }>(
    orm
      .insert(idempotencyKeys)
      .values({
        workspaceId: sql.placeholder('workspaceId'),
        key: sql.placeholder('key'),
        method: sql.placeholder('method'),
        path: sql.placeholder('path'),
        status: sql.placeholder('status'),
        headers: sql.placeholder('headers'),
        body: sql.placeholder('body'),
        createdAt: sql.placeholder('createdAt'),
        expiresAt: sql.placeholder('expiresAt'),
      })
      .onConflictDoUpdate({
        target: [idempotencyKeys.workspaceId, idempotencyKeys.key],
        set: {
          method: excluded(idempotencyKeys.method),
          path: excluded(idempotencyKeys.path),
          status: excluded(idempotencyKeys.status),
          headers: excluded(idempotencyKeys.headers),
          body: excluded(idempotencyKeys.body),
          createdAt: excluded(idempotencyKeys.createdAt),
          expiresAt: excluded(idempotencyKeys.expiresAt),
        },
        setWhere: lte(idempotencyKeys.expiresAt, excluded(idempotencyKeys.createdAt)),
      }),
  );
  const purge = engine.statement(orm.delete(idempotencyKeys).where(lte(idempotencyKeys.expiresAt, sql.placeholder('now'))));

  return {
    async findIdempotencyRecord(workspaceId, key, now) {
      const row = await findLive.row({ workspaceId, key, now });
      if (!row) return undefined;
      const [method, path, status, headers, body, createdAt, expiresAt] = row;
      return { workspaceId, key, method, path, status, headers: JSON.parse(headers) as Record<string, string>, body, createdAt, expiresAt };
    },

    async saveIdempotencyRecord(input) {
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
      const changes = await engine.write(() => upsert.run({ ...record, headers: JSON.stringify(record.headers) }));
      if (changes === 0) {
        throw new StoreError('invalid_argument', `The idempotency key "${input.key}" already has a stored answer in this workspace.`);
      }
      return record;
    },

    async purgeExpiredIdempotencyKeys(now) {
      return engine.write(() => purge.run({ now }));
    },
  };
}
