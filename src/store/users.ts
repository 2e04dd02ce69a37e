// Users of the Work-Platform API: each belongs to exactly one workspace, with a role.
import { and, count, eq, sql } from 'drizzle-orm';
import { connectors, deals, oauthRecords, tasks, users, webhookSubscriptions, workspaceRoles, workspaces, type WorkspaceRole } from '../../db/schema.js';
import { engineOf, type StoreSource } from './engine.js';
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
  createUser(input: CreateUserInput): Promise<{ id: string }>;
  getUser(id: string): Promise<User | undefined>;
  /** Session authentication reads this on every request: the user and its workspace in one statement. */
  getUserAndWorkspace(id: string): Promise<{ user: User; workspace: Workspace | undefined } | undefined>;
  /**
   * Gives the user another role. Its tokens keep their scopes, but from the next request they act
   * only with those the new role holds (`x-role-scopes`); its sessions carry the new role's scopes.
   */
  setUserRole(id: string, role: WorkspaceRole): Promise<{ id: string; workspaceId: string; role: WorkspaceRole; previousRole: WorkspaceRole }>;
  /** Refuses every session token of the user issued until now; returns the time from which tokens count again. */
  revokeSessions(id: string): Promise<{ id: string; sessionsValidAfter: number }>;
  /**
   * Removes the user from its workspace: the user, its personal access tokens and everything the
   * OAuth authorization server issued for it go in one transaction. The webhook subscriptions and
   * connectors it created stay, marked as their creator's removal (creatorRemoved). Refused while
   * tasks are assigned to the user or deals are owned by it (they would name a user who no longer exists).
   * Answers the ids of what it flagged.
   */
  deleteUser(id: string): Promise<{ id: string; workspaceId: string; flagged: { webhooks: string[]; connectors: string[] } }>;
}

export function createUserStore(source: StoreSource, options: UserStoreOptions = {}): UserStore {
  const now = options.now ?? Date.now;
  const randomBytes = options.randomBytes ?? defaultRandomBytes;
  const engine = engineOf(source);
  const { orm } = engine;
  const userColumns = {
    id: users.id,
    workspaceId: users.workspaceId,
    role: users.role,
    name: users.name,
    email: users.email,
    createdAt: users.createdAt,
    sessionsValidAfter: users.sessionsValidAfter,
  };
  const selectById = engine.statement<User, { id: string }>(orm.select(userColumns).from(users).where(eq(users.id, sql.placeholder('id'))));
  // Every session-authenticated request reads this: one statement, rows as arrays.
  const withWorkspace = withWorkspaceColumns(userColumns);
  const selectWithWorkspace = engine.statement<unknown, { id: string }>(
    orm
      .select(withWorkspace.columns)
      .from(users)
      .leftJoin(workspaces, eq(workspaces.id, users.workspaceId))
      .where(eq(users.id, sql.placeholder('id'))),
  );
  const selectWorkspace = engine.statement<unknown, { id: string }>(
    orm.select({ id: workspaces.id }).from(workspaces).where(eq(workspaces.id, sql.placeholder('id'))),
  );
  const insert = engine.statement(
    orm.insert(users).values({
      id: sql.placeholder('id'),
      workspaceId: sql.placeholder('workspaceId'),
      role: sql.placeholder('role'),
      name: sql.placeholder('name'),
      email: sql.placeholder('email'),
      createdAt: sql.placeholder('createdAt'),
    }),
  );
  const setSessionsValidAfter = engine.statement(
    orm
      .update(users)
      .set({ sessionsValidAfter: sql`${sql.placeholder('sessionsValidAfter')}` })
      .where(eq(users.id, sql.placeholder('id'))),
  );
  const setRole = engine.statement(orm.update(users).set({ role: sql`${sql.placeholder('role')}` }).where(eq(users.id, sql.placeholder('id'))));
  const countAssignedTasks = engine.statement<{ count: number }, { workspaceId: string; id: string }>(
    orm
      .select({ count: count() })
      .from(tasks)
      .where(and(eq(tasks.workspaceId, sql.placeholder('workspaceId')), eq(tasks.assigneeId, sql.placeholder('id')))),
  );
  const countOwnedDeals = engine.statement<{ count: number }, { workspaceId: string; id: string }>(
    orm
      .select({ count: count() })
      .from(deals)
      .where(and(eq(deals.workspaceId, sql.placeholder('workspaceId')), eq(deals.ownerId, sql.placeholder('id')))),
  );
  const deleteOauthRecords = engine.statement(orm.delete(oauthRecords).where(eq(oauthRecords.accountId, sql.placeholder('id'))));
  // What the user created stays, flagged for an administrator (creatorRemoved in the API).
  const flagCreatedWebhooks = engine.statement<{ id: string }>(
    orm
      .update(webhookSubscriptions)
      .set({ creatorRemovedAt: sql`${sql.placeholder('at')}` })
      .where(and(eq(webhookSubscriptions.workspaceId, sql.placeholder('workspaceId')), eq(webhookSubscriptions.createdBy, sql.placeholder('id'))))
      .returning({ id: webhookSubscriptions.id }),
  );
  const flagCreatedConnectors = engine.statement<{ id: string }>(
    orm
      .update(connectors)
      .set({ creatorRemovedAt: sql`${sql.placeholder('at')}` })
      .where(and(eq(connectors.workspaceId, sql.placeholder('workspaceId')), eq(connectors.createdBy, sql.placeholder('id'))))
      .returning({ id: connectors.id }),
  );
  const deleteById = engine.statement(orm.delete(users).where(eq(users.id, sql.placeholder('id'))));

  return {
    async createUser({ workspaceId, role, name = null, email = null, id: fixedId }) {
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
      await engine.write(async () => {
        if (!(await selectWorkspace.row({ id: workspaceId }))) throw new NotFoundError('workspace', workspaceId);
        await insert.run({ id, workspaceId, role, name: cleanName, email: cleanEmail, createdAt: now() });
      });
      return { id };
    },

    getUser: (id) => engine.read(() => selectById.object({ id })),

    setUserRole(id, role) {
      if (!(workspaceRoles as readonly string[]).includes(role)) {
        throw new StoreError('invalid_argument', `Unknown role "${String(role)}"; use one of ${workspaceRoles.join(', ')}.`);
      }
      return engine.write(async () => {
        const user = await selectById.object({ id });
        if (!user) throw new NotFoundError('user', id);
        await setRole.run({ id, role });
        return { id, workspaceId: user.workspaceId, role, previousRole: user.role };
      });
    },

    async revokeSessions(id) {
      // Tokens carry whole seconds: the next second is the first whose tokens count again.
      const sessionsValidAfter = (Math.floor(now() / 1000) + 1) * 1000;
      const changed = await engine.write(() => setSessionsValidAfter.run({ sessionsValidAfter, id }));
      if (changed === 0) throw new NotFoundError('user', id);
      return { id, sessionsValidAfter };
    },

    deleteUser(id) {
      return engine.write(async () => {
        const user = await selectById.object({ id });
        if (!user) throw new NotFoundError('user', id);
        const assigned = (await countAssignedTasks.object({ workspaceId: user.workspaceId, id }))?.count ?? 0;
        if (assigned > 0) {
          throw new StoreError('invalid_argument', `${assigned} task${assigned === 1 ? ' is' : 's are'} assigned to ${id}; assign them to someone else first.`);
        }
        const owned = (await countOwnedDeals.object({ workspaceId: user.workspaceId, id }))?.count ?? 0;
        if (owned > 0) {
          throw new StoreError('invalid_argument', `${owned} deal${owned === 1 ? ' is' : 's are'} owned by ${id}; give them to someone else first.`);
        }
        await deleteOauthRecords.run({ id });
        const at = now();
        const flagged = {
          webhooks: (await flagCreatedWebhooks.objects({ workspaceId: user.workspaceId, id, at })).map((row) => row.id).sort(),
          connectors: (await flagCreatedConnectors.objects({ workspaceId: user.workspaceId, id, at })).map((row) => row.id).sort(),
        };
        // The user's personal access tokens go with it (foreign key cascade).
        await deleteById.run({ id });
        return { id, workspaceId: user.workspaceId, flagged };
      });
    },

    async getUserAndWorkspace(id) {
      const row = await engine.read(() => selectWithWorkspace.row({ id }));
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
