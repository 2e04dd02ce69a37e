// Personal access tokens (`svc_pat_…`): scope-bounded, bound to one user and that user's
// workspace, stored only as a SHA-256 hash (src/auth/patFormat.ts makes tokens and hashes),
// revocable and rotatable.
import { roleScopes, scopeCatalogue, type Scope } from '../../generated/work-platform/rules.js';
import { and, asc, eq, sql } from 'drizzle-orm';
import { personalAccessTokens, users, workspaces } from '../../db/schema.js';
import { engineOf, type StoreSource } from './engine.js';
import { StoreError } from './errors.js';
import { defaultRandomBytes, newId, type RandomBytes } from './ids.js';
import type { WorkspaceRole } from './users.js';
import { NotFoundError } from './workPlatformErrors.js';
import { withWorkspaceColumns, workspaceFromRow, type Workspace } from './workspaces.js';

/** What is stored of a token: its lowercase hex SHA-256. */
const tokenHashPattern = /^[0-9a-f]{64}$/;

export function isScope(value: string): value is Scope {
  return (scopeCatalogue as readonly string[]).includes(value);
}

export type PatState = 'active' | 'revoked' | 'expired';

/** What authentication needs to know about a presented token. */
export interface PatRecord {
  id: string;
  workspaceId: string;
  userId: string;
  scopes: Scope[];
  /** Milliseconds since the epoch; null when the token never expires. */
  expiresAt: number | null;
  /** Milliseconds since the epoch; null while the token is not revoked. */
  revokedAt: number | null;
}

/** A presented token with what authentication checks next, read in one statement. */
export interface PatCaller extends PatRecord {
  /** The user's role; null when the user no longer exists in the token's workspace. */
  role: WorkspaceRole | null;
  /** Undefined when the token's workspace no longer exists. */
  workspace: Workspace | undefined;
}

/** A token as listed to an operator: never the token or its hash. */
export interface PatSummary extends PatRecord {
  prefix: string;
  createdAt: number;
  /** The token that replaced this one by rotation, if any. */
  rotatedTo: string | null;
  state: PatState;
}

/** What is stored of a new token: its hash, and its first characters for display. */
export interface StoredTokenForm {
  /** The token's SHA-256 in lowercase hex; the token itself is never stored. */
  tokenHash: string;
  tokenPrefix: string;
}

export interface CreatePatInput extends StoredTokenForm {
  workspaceId: string;
  userId: string;
  /** A subset of scopeCatalogue; may be empty (such a token can call nothing that needs a scope). */
  scopes: readonly string[];
  /** Milliseconds since the epoch; omitted or null for a token that never expires. */
  expiresAt?: number | null;
}

export interface PersonalAccessTokenStoreOptions {
  now?: () => number;
  randomBytes?: RandomBytes;
}

export interface PersonalAccessTokenStore {
  /** Stores a token by its hash; refused when a scope is one the user's role may not hold (`x-role-scopes`). */
  createPat(input: CreatePatInput): Promise<{ id: string }>;
  /**
   * The hot path of every PAT-authenticated request: the token, its user's role and its workspace
   * in one statement, read anew on every call (a revocation by any process counts at once; on
   * PostgreSQL the server keeps the answer for at most a second, src/store/cachedRows.ts).
   */
  findPatCaller(tokenHash: string): Promise<PatCaller | undefined>;
  /** Revokes a token; revoking a revoked token is a no-op that returns the original time. */
  revokePat(id: string): Promise<{ id: string; revokedAt: number }>;
  /**
   * Stores `replacement` with the same user, scopes and expiry as token `id` and revokes `id`, in
   * one transaction; of the scopes, only those the user's role holds now. A revoked or expired
   * token cannot be rotated.
   */
  rotatePat(id: string, replacement: StoredTokenForm): Promise<{ id: string }>;
  /** A workspace's tokens, oldest first. */
  listPats(workspaceId: string): Promise<PatSummary[]>;
}

/** Revocation wins over expiry; a token expires at the instant `expiresAt`. */
export function patState(token: Pick<PatRecord, 'expiresAt' | 'revokedAt'>, now: number): PatState {
  if (token.revokedAt !== null) return 'revoked';
  if (token.expiresAt !== null && token.expiresAt <= now) return 'expired';
  return 'active';
}

/** Checks and normalizes scopes: known names only, no duplicates, in catalogue order. */
export function normalizeScopes(scopes: readonly string[]): Scope[] {
  if (!Array.isArray(scopes)) throw new StoreError('invalid_argument', 'scopes must be a list of scope names.');
  const unknown = scopes.filter((scope) => !isScope(scope));
  if (unknown.length > 0) {
    throw new StoreError(
      'invalid_argument',
      `Unknown ${unknown.length === 1 ? 'scope' : 'scopes'} ${unknown.map((scope) => `"${scope}"`).join(', ')}; known scopes: ${scopeCatalogue.join(', ')}.`,
    );
  }
  return scopeCatalogue.filter((scope) => scopes.includes(scope));
}

const parseScopes = (json: string) => JSON.parse(json) as Scope[];

export function createPersonalAccessTokenStore(source: StoreSource, options: PersonalAccessTokenStoreOptions = {}): PersonalAccessTokenStore {
  const now = options.now ?? Date.now;
  const randomBytes = options.randomBytes ?? defaultRandomBytes;
  const engine = engineOf(source);
  const { orm } = engine;

  const recordColumns = {
    id: personalAccessTokens.id,
    workspaceId: personalAccessTokens.workspaceId,
    userId: personalAccessTokens.userId,
    scopes: personalAccessTokens.scopes,
    expiresAt: personalAccessTokens.expiresAt,
    revokedAt: personalAccessTokens.revokedAt,
  };
  type TokenRecord = Omit<PatRecord, 'scopes'> & { scopes: string };
  const findById = engine.statement<TokenRecord, { id: string }>(
    orm.select(recordColumns).from(personalAccessTokens).where(eq(personalAccessTokens.id, sql.placeholder('id'))),
  );
  // Every PAT-authenticated request reads this: one statement, rows as arrays.
  const callerColumns = withWorkspaceColumns({ ...recordColumns, role: users.role });
  const selectCaller = engine.statement<unknown, { tokenHash: string }>(
    orm
      .select(callerColumns.columns)
      .from(personalAccessTokens)
      .leftJoin(users, and(eq(users.id, personalAccessTokens.userId), eq(users.workspaceId, personalAccessTokens.workspaceId)))
      .leftJoin(workspaces, eq(workspaces.id, personalAccessTokens.workspaceId))
      .where(eq(personalAccessTokens.tokenHash, sql.placeholder('tokenHash'))),
  );
  const selectWorkspace = engine.statement<unknown, { workspaceId: string }>(
    orm.select({ id: workspaces.id }).from(workspaces).where(eq(workspaces.id, sql.placeholder('workspaceId'))),
  );
  const selectUserRole = engine.statement<{ role: WorkspaceRole }, { workspaceId: string; userId: string }>(
    orm
      .select({ role: users.role })
      .from(users)
      .where(and(eq(users.id, sql.placeholder('userId')), eq(users.workspaceId, sql.placeholder('workspaceId')))),
  );
  const insert = engine.statement(
    orm.insert(personalAccessTokens).values({
      id: sql.placeholder('id'),
      workspaceId: sql.placeholder('workspaceId'),
      userId: sql.placeholder('userId'),
      tokenHash: sql.placeholder('tokenHash'),
      tokenPrefix: sql.placeholder('tokenPrefix'),
      scopes: sql.placeholder('scopes'),
      createdAt: sql.placeholder('createdAt'),
      expiresAt: sql.placeholder('expiresAt'),
    }),
  );
  const setRevoked = engine.statement(
    orm
      .update(personalAccessTokens)
      .set({ revokedAt: sql`${sql.placeholder('revokedAt')}` })
      .where(eq(personalAccessTokens.id, sql.placeholder('id'))),
  );
  const setRotated = engine.statement(
    orm
      .update(personalAccessTokens)
      .set({ revokedAt: sql`${sql.placeholder('revokedAt')}`, rotatedTo: sql`${sql.placeholder('rotatedTo')}` })
      .where(eq(personalAccessTokens.id, sql.placeholder('id'))),
  );
  const selectByWorkspace = engine.statement<TokenRecord & { prefix: string; createdAt: number; rotatedTo: string | null }, { workspaceId: string }>(
    orm
      .select({ ...recordColumns, prefix: personalAccessTokens.tokenPrefix, createdAt: personalAccessTokens.createdAt, rotatedTo: personalAccessTokens.rotatedTo })
      .from(personalAccessTokens)
      .where(eq(personalAccessTokens.workspaceId, sql.placeholder('workspaceId')))
      .orderBy(asc(personalAccessTokens.createdAt), asc(personalAccessTokens.id)),
  );

  /** Inserts a new token row; must run inside a write. */
  async function insertToken(input: { workspaceId: string; userId: string; scopes: Scope[]; expiresAt: number | null } & StoredTokenForm) {
    const id = newId('pat', randomBytes);
    await insert.run({
      id,
      workspaceId: input.workspaceId,
      userId: input.userId,
      tokenHash: input.tokenHash,
      tokenPrefix: input.tokenPrefix,
      scopes: JSON.stringify(input.scopes),
      createdAt: now(),
      expiresAt: input.expiresAt,
    });
    return { id };
  }

  function checkTokenForm({ tokenHash }: StoredTokenForm): void {
    if (!tokenHashPattern.test(tokenHash)) throw new StoreError('invalid_argument', 'tokenHash must be a lowercase hex SHA-256.');
  }

  return {
    async createPat({ workspaceId, userId, scopes, expiresAt = null, tokenHash, tokenPrefix }) {
      checkTokenForm({ tokenHash, tokenPrefix });
      const normalized = normalizeScopes(scopes);
      if (expiresAt !== null && !Number.isSafeInteger(expiresAt)) {
        throw new StoreError('invalid_argument', 'expiresAt must be a whole number of milliseconds since the epoch.');
      }
      return engine.write(async () => {
        if (!(await selectWorkspace.row({ workspaceId }))) throw new NotFoundError('workspace', workspaceId);
        const user = await selectUserRole.object({ workspaceId, userId });
        if (!user) throw new NotFoundError('user', userId);
        const beyondRole = normalized.filter((scope) => !roleScopes[user.role].includes(scope));
        if (beyondRole.length > 0) {
          throw new StoreError(
            'invalid_argument',
            `The user ${userId} is ${user.role === 'admin' ? 'an' : 'a'} ${user.role}, whose role may not hold ${beyondRole.join(', ')}; leave ${beyondRole.length === 1 ? 'it' : 'them'} out (a ${user.role} may hold ${roleScopes[user.role].join(', ') || 'no scope'}).`,
          );
        }
        return insertToken({ workspaceId, userId, scopes: normalized, expiresAt, tokenHash, tokenPrefix });
      });
    },

    async findPatCaller(tokenHash) {
      const row = await engine.read(() => selectCaller.row({ tokenHash }));
      if (!row) return undefined;
      // In the order of recordColumns, then the role, then the workspace.
      return {
        id: row[0] as string,
        workspaceId: row[1] as string,
        userId: row[2] as string,
        scopes: parseScopes(row[3] as string),
        expiresAt: row[4] as number | null,
        revokedAt: row[5] as number | null,
        role: row[6] as WorkspaceRole | null,
        workspace: workspaceFromRow(row, callerColumns.workspaceOffset),
      };
    },

    revokePat(id) {
      return engine.write(async () => {
        const existing = await findById.object({ id });
        if (!existing) throw new NotFoundError('personal-access-token', id);
        if (existing.revokedAt !== null) return { id, revokedAt: existing.revokedAt };
        const revokedAt = now();
        await setRevoked.run({ id, revokedAt });
        return { id, revokedAt };
      });
    },

    async rotatePat(id, { tokenHash, tokenPrefix }) {
      checkTokenForm({ tokenHash, tokenPrefix });
      return engine.write(async () => {
        const existing = await findById.object({ id });
        if (!existing) throw new NotFoundError('personal-access-token', id);
        const at = now();
        const state = patState(existing, at);
        if (state !== 'active') {
          throw new StoreError('invalid_argument', `The token ${id} is ${state}; only an active token can be rotated. Create a new one instead.`);
        }
        // The replacement keeps only the scopes the user's role holds now: no token is minted with more.
        const user = await selectUserRole.object({ workspaceId: existing.workspaceId, userId: existing.userId });
        if (!user) throw new NotFoundError('user', existing.userId);
        const scopes = parseScopes(existing.scopes).filter((scope) => roleScopes[user.role].includes(scope));
        const replacement = await insertToken({ ...existing, scopes, tokenHash, tokenPrefix });
        await setRotated.run({ id, revokedAt: at, rotatedTo: replacement.id });
        return replacement;
      });
    },

    async listPats(workspaceId) {
      const at = now();
      const rows = await engine.read(() => selectByWorkspace.objects({ workspaceId }));
      return rows.map((row) => ({ ...row, scopes: parseScopes(row.scopes), state: patState(row, at) }));
    },
  };
}
