// What the OAuth 2.0 authorization server persists (tokens, codes, grants, sessions,
// interactions), keyed by model and the SHA-256 of the record's id; src/auth/oauth/oauthAdapter.ts
// hashes the ids and shapes the payloads. Also the read every OAuth-authenticated /v1 request
// makes: the access token with its client, user and workspace, in one statement.
import { and, desc, eq, gt, isNull, lte, notInArray, or, sql } from 'drizzle-orm';
import { oauthClients, oauthRecords, users, workspaces } from '../../db/schema.js';
import { engineOf, type StoreSource } from './engine.js';
import type { WorkspaceRole } from './users.js';
import { withWorkspaceColumns, workspaceFromRow, type Workspace } from './workspaces.js';

export interface OauthRecordInput {
  model: string;
  /** Lowercase hex SHA-256 of the record's id. */
  idHash: string;
  /** JSON without the id. */
  payload: string;
  grantId: string | null;
  clientId: string | null;
  accountId: string | null;
  uid: string | null;
  /** Milliseconds since the epoch; null: never. */
  expiresAt: number | null;
}

export interface StoredOauthRecord {
  payload: string;
  /** Milliseconds since the epoch; null while unused. */
  consumedAt: number | null;
}

/** An access token presented to /v1, with what authentication checks next. */
export interface OauthAccessTokenCaller {
  /** The token's JSON payload (scope, aud, …). */
  payload: string;
  expiresAt: number | null;
  clientId: string | null;
  accountId: string | null;
  /** The workspace of the token's client; null when the client no longer exists. */
  clientWorkspaceId: string | null;
  /** The user's role in the client's workspace; null when the user is gone or not in that workspace. */
  role: WorkspaceRole | null;
  /** The client's workspace; undefined when it (or the client) no longer exists. */
  workspace: Workspace | undefined;
}

export interface OauthRecordStore {
  /** Inserts or replaces a record (a replaced record keeps its consumed time). */
  save(record: OauthRecordInput): Promise<void>;
  /**
   * Saves an interaction (an authorization in progress) and, in the same transaction, keeps only the
   * `keepPerClient` of its client that expire last: a flood of authorization requests with one
   * public client id cannot grow the table past it, and a new request always gets through.
   */
  saveInteraction(record: OauthRecordInput & { clientId: string }, keepPerClient: number): Promise<void>;
  /** An unexpired record, or undefined. */
  find(model: string, idHash: string): Promise<StoredOauthRecord | undefined>;
  findByUid(model: string, uid: string): Promise<StoredOauthRecord | undefined>;
  /** Marks a single-use record as used. */
  consume(model: string, idHash: string): Promise<void>;
  destroy(model: string, idHash: string): Promise<void>;
  /** Deletes every record of the model that belongs to the grant. */
  revokeByGrantId(model: string, grantId: string): Promise<void>;
  /** Deletes expired records; returns how many. */
  purgeExpired(): Promise<number>;
  /** The hot path of OAuth-authenticated /v1 requests: one statement, read anew on every call. */
  findAccessTokenCaller(idHash: string): Promise<OauthAccessTokenCaller | undefined>;
}

export function createOauthRecordStore(source: StoreSource, options: { now?: () => number } = {}): OauthRecordStore {
  const now = options.now ?? Date.now;
  const engine = engineOf(source);
  const { orm } = engine;
  const unexpired = or(isNull(oauthRecords.expiresAt), gt(oauthRecords.expiresAt, sql.placeholder('now')));
  const byKey = and(eq(oauthRecords.model, sql.placeholder('model')), eq(oauthRecords.idHash, sql.placeholder('idHash')));
  const stored = { payload: oauthRecords.payload, consumedAt: oauthRecords.consumedAt };

  const upsert = engine.statement(
    orm
      .insert(oauthRecords)
      .values({
        model: sql.placeholder('model'),
        idHash: sql.placeholder('idHash'),
        payload: sql.placeholder('payload'),
        grantId: sql.placeholder('grantId'),
        clientId: sql.placeholder('clientId'),
        accountId: sql.placeholder('accountId'),
        uid: sql.placeholder('uid'),
        expiresAt: sql.placeholder('expiresAt'),
      })
      .onConflictDoUpdate({
        target: [oauthRecords.model, oauthRecords.idHash],
        set: {
          payload: sql`${sql.placeholder('payload')}`,
          grantId: sql`${sql.placeholder('grantId')}`,
          clientId: sql`${sql.placeholder('clientId')}`,
          accountId: sql`${sql.placeholder('accountId')}`,
          uid: sql`${sql.placeholder('uid')}`,
          expiresAt: sql`${sql.placeholder('expiresAt')}`,
        },
      }),
  );
  const selectByKey = engine.statement<StoredOauthRecord, { model: string; idHash: string; now: number }>(
    orm.select(stored).from(oauthRecords).where(and(byKey, unexpired)),
  );
  const selectByUid = engine.statement<StoredOauthRecord, { model: string; uid: string; now: number }>(
    orm
      .select(stored)
      .from(oauthRecords)
      .where(and(eq(oauthRecords.model, sql.placeholder('model')), eq(oauthRecords.uid, sql.placeholder('uid')), unexpired)),
  );
  const consume = engine.statement(orm.update(oauthRecords).set({ consumedAt: sql`${sql.placeholder('now')}` }).where(byKey));
  const destroy = engine.statement(orm.delete(oauthRecords).where(byKey));
  const deleteByGrant = engine.statement(
    orm
      .delete(oauthRecords)
      .where(and(eq(oauthRecords.model, sql.placeholder('model')), eq(oauthRecords.grantId, sql.placeholder('grantId')))),
  );
  const clientInteractions = and(eq(oauthRecords.model, 'Interaction'), eq(oauthRecords.clientId, sql.placeholder('clientId')));
  const deleteOldestInteractions = engine.statement(
    orm.delete(oauthRecords).where(
      and(
        clientInteractions,
        notInArray(
          oauthRecords.idHash,
          orm
            .select({ idHash: oauthRecords.idHash })
            .from(oauthRecords)
            .where(clientInteractions)
            .orderBy(desc(oauthRecords.expiresAt), desc(oauthRecords.idHash))
            .limit(sql.placeholder('keep')),
        ),
      ),
    ),
  );
  const deleteExpired = engine.statement(orm.delete(oauthRecords).where(lte(oauthRecords.expiresAt, sql.placeholder('now'))));

  // Every OAuth-authenticated /v1 request reads this: compiled, rows as arrays. The user must be
  // in the client's workspace: a client is authorized only by its workspace's users.
  const callerColumns = withWorkspaceColumns({
    payload: oauthRecords.payload,
    expiresAt: oauthRecords.expiresAt,
    clientId: oauthRecords.clientId,
    accountId: oauthRecords.accountId,
    clientWorkspaceId: oauthClients.workspaceId,
    role: users.role,
  });
  const selectCaller = engine.statement<unknown, { model: string; idHash: string }>(
    orm
      .select(callerColumns.columns)
      .from(oauthRecords)
      .leftJoin(oauthClients, eq(oauthClients.id, oauthRecords.clientId))
      .leftJoin(users, and(eq(users.id, oauthRecords.accountId), eq(users.workspaceId, oauthClients.workspaceId)))
      .leftJoin(workspaces, eq(workspaces.id, oauthClients.workspaceId))
      .where(and(eq(oauthRecords.model, sql.placeholder('model')), eq(oauthRecords.idHash, sql.placeholder('idHash')))),
  );

  return {
    async save(record) {
      await engine.write(() => upsert.run({ ...record }));
    },
    async saveInteraction(record, keepPerClient) {
      await engine.write(async () => {
        await upsert.run({ ...record });
        await deleteOldestInteractions.run({ clientId: record.clientId, keep: keepPerClient });
      });
    },
    find(model, idHash) {
      return engine.read(() => selectByKey.object({ model, idHash, now: now() }));
    },
    findByUid(model, uid) {
      return engine.read(() => selectByUid.object({ model, uid, now: now() }));
    },
    async consume(model, idHash) {
      await engine.write(() => consume.run({ model, idHash, now: now() }));
    },
    async destroy(model, idHash) {
      await engine.write(() => destroy.run({ model, idHash }));
    },
    async revokeByGrantId(model, grantId) {
      await engine.write(() => deleteByGrant.run({ model, grantId }));
    },
    purgeExpired() {
      return engine.write(() => deleteExpired.run({ now: now() }));
    },
    async findAccessTokenCaller(idHash) {
      const row = await engine.read(() => selectCaller.row({ model: 'AccessToken', idHash }));
      if (!row) return undefined;
      return {
        payload: row[0] as string,
        expiresAt: row[1] as number | null,
        clientId: row[2] as string | null,
        accountId: row[3] as string | null,
        clientWorkspaceId: row[4] as string | null,
        role: row[5] as WorkspaceRole | null,
        workspace: workspaceFromRow(row, callerColumns.workspaceOffset),
      };
    },
  };
}
