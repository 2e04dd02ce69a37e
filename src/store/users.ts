// Users of the Work-Platform API: each belongs to exactly one workspace, with a role.
import type BetterSqlite3 from 'better-sqlite3';
import { and, count, eq, sql } from 'drizzle-orm';
import { deals, oauthRecords, tasks, users, workspaceRoles, workspaces, type WorkspaceRole } from '../../db/schema.js';
import { compiledStatement, drizzleFor } from './drizzle.js';
import { StoreError } from './errors.js';
import { defaultRandomBytes, newId, type RandomBytes } from './ids.js';
import { NotFoundError } from './workPlatformErrors.js';
import { withWorkspaceColumns, workspaceFromRow, type Workspace } from './workspaces.js';

export { workspaceRoles, type WorkspaceRole };

export interface User {
  id: string;
  workspaceId: string;
  role: WorkspaceRole;
  name: string | null;
  email: string | null;
  /** Milliseconds since the epoch. */
  createdAt: number;
  /** Session tokens issued before this time (ms) are refused; 0 until the user's sessions are revoked. */
  sessionsValidAfter: number;
}

export interface CreateUserInput {
  workspaceId: string;
  role: WorkspaceRole;
  name?: string | null;
  email?: string | null;
  /** A fixed id (the demo data set uses one); a new `usr_…` id by default. */
  id?: string;
}

export interface UserStoreOptions {
  now?: () => number;
  randomBytes?: RandomBytes;
}

export interface UserStore {
  createUser(input: CreateUserInput): { id: string };
  getUser(id: string): User | undefined;
  /** Session authentication reads this on every request: the user and its workspace in one statement. */
  getUserAndWorkspace(id: string): { user: User; workspace: Workspace | undefined } | undefined;
  /** Refuses every session token of the user issued until now; returns the time from which tokens count again. */
  revokeSessions(id: string): { id: string; sessionsValidAfter: number };
  /**
   * Removes the user from its workspace: the user, its personal access tokens and everything the
   * OAuth authorization server issued for it go in one transaction. Refused while tasks are
   * assigned to the user or deals are owned by it (they would name a user who no longer exists).
   */
  deleteUser(id: string): { id: string; workspaceId: string };
}

export function createUserStore(db: BetterSqlite3.Database, options: UserStoreOptions = {}): UserStore {
  const now = options.now ?? Date.now;
  const randomBytes = options.randomBytes ?? defaultRandomBytes;
  const orm = drizzleFor(db);
  const userColumns = {
    id: users.id,
    workspaceId: users.workspaceId,
    role: users.role,
    name: users.name,
    email: users.email,
    createdAt: users.createdAt,
    sessionsValidAfter: users.sessionsValidAfter,
  };
  const selectById = orm.select(userColumns).from(users).where(eq(users.id, sql.placeholder('id'))).prepare();
  // Every session-authenticated request reads this: compiled, rows as arrays.
  const withWorkspace = withWorkspaceColumns(userColumns);
  const selectWithWorkspace = compiledStatement<{ id: string }>(
    db,
    orm
      .select(withWorkspace.columns)
      .from(users)
      .leftJoin(workspaces, eq(workspaces.id, users.workspaceId))
      .where(eq(users.id, sql.placeholder('id'))),
  );
  const setSessionsValidAfter = orm
    .update(users)
    .set({ sessionsValidAfter: sql`${sql.placeholder('sessionsValidAfter')}` })
    .where(eq(users.id, sql.placeholder('id')))
    .prepare();

  return {
    createUser({ workspaceId, role, name = null, email = null, id: fixedId }) {
      if (!(workspaceRoles as readonly string[]).includes(role)) {
        throw new StoreError('invalid_argument', `Unknown role "${String(role)}"; use one of ${workspaceRoles.join(', ')}.`);
      }
      const cleanName = name === null ? null : name.trim() || null;
      const cleanEmail = email === null ? null : email.trim() || null;
      if (cleanEmail !== null && !/^[^\s@]+@[^\s@]+$/.test(cleanEmail)) {
        throw new StoreError('invalid_argument', `"${cleanEmail}" is not an email address.`);
      }
      const id = fixedId ?? newId('usr', randomBytes);
      if (!/^usr_[A-Za-z0-9]+$/.test(id)) throw new StoreError('invalid_argument', `Invalid user id "${id}".`);
      orm.transaction(
        (tx) => {
          const workspace = tx.select({ id: workspaces.id }).from(workspaces).where(eq(workspaces.id, workspaceId)).get();
          if (!workspace) throw new NotFoundError('workspace', workspaceId);
          tx.insert(users).values({ id, workspaceId, role, name: cleanName, email: cleanEmail, createdAt: now() }).run();
        },
        { behavior: 'immediate' },
      );
      return { id };
    },

    getUser(id) {
      return selectById.get({ id });
    },

    revokeSessions(id) {
      // Tokens carry whole seconds: the next second is the first whose tokens count again.
      const sessionsValidAfter = (Math.floor(now() / 1000) + 1) * 1000;
      const changed = setSessionsValidAfter.run({ sessionsValidAfter, id }).changes;
      if (changed === 0) throw new NotFoundError('user', id);
      return { id, sessionsValidAfter };
    },

    deleteUser(id) {
      return orm.transaction(
        (tx) => {
          const user = selectById.get({ id });
          if (!user) throw new NotFoundError('user', id);
          const assigned = tx.select({ count: count() }).from(tasks).where(and(eq(tasks.workspaceId, user.workspaceId), eq(tasks.assigneeId, id))).get()?.count ?? 0;
          if (assigned > 0) {
            throw new StoreError('invalid_argument', `${assigned} task${assigned === 1 ? ' is' : 's are'} assigned to ${id}; assign them to someone else first.`);
          }
          const owned = tx.select({ count: count() }).from(deals).where(and(eq(deals.workspaceId, user.workspaceId), eq(deals.ownerId, id))).get()?.count ?? 0;
          if (owned > 0) {
            throw new StoreError('invalid_argument', `${owned} deal${owned === 1 ? ' is' : 's are'} owned by ${id}; give them to someone else first.`);
          }
          tx.delete(oauthRecords).where(eq(oauthRecords.accountId, id)).run();
          // The user's personal access tokens go with it (foreign key cascade).
          tx.delete(users).where(eq(users.id, id)).run();
          return { id, workspaceId: user.workspaceId };
        },
        { behavior: 'immediate' },
      );
    },

    getUserAndWorkspace(id) {
      const row = selectWithWorkspace.row({ id });
      if (!row) return undefined;
      const user: User = {
        id: row[0] as string,
        workspaceId: row[1] as string,
        role: row[2] as WorkspaceRole,
        name: row[3] as string | null,
        email: row[4] as string | null,
        createdAt: row[5] as number,
        sessionsValidAfter: row[6] as number,
      };
      return { user, workspace: workspaceFromRow(row, withWorkspace.workspaceOffset) };
    },
  };
}
