// OAuth 2.0 clients of the authorization server: registered by an operator for one workspace,
// public (PKCE only) or confidential (a secret, stored only as its SHA-256). Deleting a client
// deletes every token, code and grant issued to it, in the same transaction.
import { asc, eq, sql } from 'drizzle-orm';
import { oauthClients, oauthRecords, workspaces } from '../../db/schema.js';
import { engineOf, type StoreSource } from './engine.js';
import { StoreError } from './errors.js';
import { defaultRandomBytes, newId, type RandomBytes } from './ids.js';
import { normalizeScopes } from './personalAccessTokens.js';
import type { Scope } from '../../generated/work-platform/rules.js';
import { NotFoundError } from './workPlatformErrors.js';

/** The longest client name (the CHECK constraint of oauth_clients says the same). */
export const oauthClientNameMaxLength = 120;

export interface OauthClient {
  id: string;
  workspaceId: string;
  name: string;
  redirectUris: string[];
  scopes: Scope[];
  /** Null for a public client. */
  secretHash: string | null;
  createdAt: number;
}

export interface CreateOauthClientInput {
  workspaceId: string;
  name: string;
  /** Already checked by the caller (src/auth/oauth/redirectUris.ts); at least one. */
  redirectUris: readonly string[];
  /** A non-empty subset of the scope catalogue. */
  scopes: readonly string[];
  /** Lowercase hex SHA-256 of the secret of a confidential client; null for a public one. */
  secretHash: string | null;
  /** A fixed id (the demo data set uses one); a new `ocl_…` id by default. */
  id?: string;
}

export interface OauthClientStore {
  createOauthClient(input: CreateOauthClientInput): Promise<{ id: string }>;
  /** Read by the authorization server on every request that names the client. */
  getOauthClient(id: string): Promise<OauthClient | undefined>;
  /** A workspace's clients, oldest first. */
  listOauthClients(workspaceId: string): Promise<OauthClient[]>;
  /** Deletes the client and everything issued to it; its tokens stop working at once. */
  deleteOauthClient(id: string): Promise<{ id: string; deletedRecords: number }>;
}

const secretHashPattern = /^[0-9a-f]{64}$/;
const clientIdPattern = /^ocl_[A-Za-z0-9]+$/;

export function createOauthClientStore(source: StoreSource, options: { now?: () => number; randomBytes?: RandomBytes } = {}): OauthClientStore {
  const now = options.now ?? Date.now;
  const randomBytes = options.randomBytes ?? defaultRandomBytes;
  const engine = engineOf(source);
  const { orm } = engine;
  const columns = {
    id: oauthClients.id,
    workspaceId: oauthClients.workspaceId,
    name: oauthClients.name,
    redirectUris: oauthClients.redirectUris,
    scopes: oauthClients.scopes,
    secretHash: oauthClients.secretHash,
    createdAt: oauthClients.createdAt,
  };
  const fromRow = (row: readonly unknown[]): OauthClient => ({
    id: row[0] as string,
    workspaceId: row[1] as string,
    name: row[2] as string,
    redirectUris: JSON.parse(row[3] as string) as string[],
    scopes: JSON.parse(row[4] as string) as Scope[],
    secretHash: row[5] as string | null,
    createdAt: row[6] as number,
  });
  const selectById = engine.statement<unknown, { id: string }>(orm.select(columns).from(oauthClients).where(eq(oauthClients.id, sql.placeholder('id'))));
  const selectByWorkspace = engine.statement<unknown, { workspaceId: string }>(
    orm
      .select(columns)
      .from(oauthClients)
      .where(eq(oauthClients.workspaceId, sql.placeholder('workspaceId')))
      .orderBy(asc(oauthClients.createdAt), asc(oauthClients.id)),
  );
  const selectWorkspace = engine.statement<unknown, { workspaceId: string }>(
    orm.select({ id: workspaces.id }).from(workspaces).where(eq(workspaces.id, sql.placeholder('workspaceId'))),
  );
  const insert = engine.statement(
    orm.insert(oauthClients).values({
      id: sql.placeholder('id'),
      workspaceId: sql.placeholder('workspaceId'),
      name: sql.placeholder('name'),
      redirectUris: sql.placeholder('redirectUris'),
      scopes: sql.placeholder('scopes'),
      secretHash: sql.placeholder('secretHash'),
      createdAt: sql.placeholder('createdAt'),
    }),
  );
  const deleteById = engine.statement(orm.delete(oauthClients).where(eq(oauthClients.id, sql.placeholder('id'))));
  const deleteRecordsOfClient = engine.statement(orm.delete(oauthRecords).where(eq(oauthRecords.clientId, sql.placeholder('id'))));

  return {
    async createOauthClient({ workspaceId, name, redirectUris, scopes, secretHash, id: fixedId }) {
      const cleanName = name.trim();
      if (cleanName.length === 0 || [...cleanName].length > oauthClientNameMaxLength) {
        throw new StoreError('invalid_argument', `The client name must be 1 to ${oauthClientNameMaxLength} characters.`);
      }
      if (redirectUris.length === 0) throw new StoreError('invalid_argument', 'A client needs at least one redirect URI.');
      const normalized = normalizeScopes(scopes);
      if (normalized.length === 0) throw new StoreError('invalid_argument', 'A client needs at least one scope.');
      if (secretHash !== null && !secretHashPattern.test(secretHash)) throw new StoreError('invalid_argument', 'secretHash must be a lowercase hex SHA-256.');
      const id = fixedId ?? newId('ocl', randomBytes);
      if (!clientIdPattern.test(id)) throw new StoreError('invalid_argument', `Invalid client id "${id}".`);
      await engine.write(async () => {
        if (!(await selectWorkspace.row({ workspaceId }))) throw new NotFoundError('workspace', workspaceId);
        await insert.run({
          id,
          workspaceId,
          name: cleanName,
          redirectUris: JSON.stringify([...new Set(redirectUris)]),
          scopes: JSON.stringify(normalized),
          secretHash,
          createdAt: now(),
        });
      });
      return { id };
    },

    async getOauthClient(id) {
      const row = await engine.read(() => selectById.row({ id }));
      return row ? fromRow(row) : undefined;
    },

    async listOauthClients(workspaceId) {
      return (await engine.read(() => selectByWorkspace.rows({ workspaceId }))).map(fromRow);
    },

    deleteOauthClient(id) {
      return engine.write(async () => {
        const deleted = await deleteById.run({ id });
        if (deleted === 0) throw new NotFoundError('oauth-client', id);
        const deletedRecords = await deleteRecordsOfClient.run({ id });
        return { id, deletedRecords };
      });
    },
  };
}
