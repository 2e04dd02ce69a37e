import { scopeCatalogue } from '../../generated/work-platform/rules.js';
// Helpers of the Work-Platform (/v1) suites: problem checks, tokens of every kind, limits and the
// outbox, built on the real stores so that fixtures pass the same checks as real data.
import { createHmac } from 'node:crypto';
import type BetterSqlite3 from 'better-sqlite3';
import { expect } from 'vitest';
import { demoUsers } from '../../src/demo/workPlatformDemo.js';
import type { StoreEngine, StoreSource } from '../../src/store/engine.js';
import { count, eq, sql, type SQL } from 'drizzle-orm';
import { events, idempotencyKeys, projects, tasks } from '../../db/schema.js';
import { issuePersonalAccessToken } from '../../src/auth/personalAccessTokens.js';
import { createPersonalAccessTokenStore } from '../../src/store/personalAccessTokens.js';
import { issueSessionToken } from '../../src/auth/sessionTokens.js';
import { createProjectStore } from '../../src/store/projects.js';
import { createUserStore } from '../../src/store/users.js';
import { createWorkspaceStore, type WorkspacePlan } from '../../src/store/workspaces.js';
import { DEFAULT_PROBLEM_TYPE_BASE, PROBLEM_TYPES, type ProblemSlug } from '../../src/workPlatform/problems.js';
import type { CheckedResponse } from './contractClient.js';

export { demoUsers };

/** The members the contract's Problem declares: nothing else may appear in a problem body. */
const PROBLEM_MEMBERS = ['type', 'title', 'status', 'detail', 'requestId', 'code', 'errors', 'requiredScopes', 'grantedScopes', 'requiredRoles', 'heldRoles', 'rateLimit', 'quota', 'aiSpend', 'connectorId'];

/**
 * Asserts an RFC 9457 problem of the contract: status, `application/problem+json`, `type` =
 * `<base>/<slug>`, the type's fixed title, `status` mirrored, a `detail`, `requestId` equal to the
 * `x-request-id` header, only declared members, and `code` when given (`null`: no code at all).
 * Returns the body for further checks.
 */
export function expectProblem(response: CheckedResponse, status: number, slug: ProblemSlug, code?: string | null): any {
  const where = `${response.status} ${response.text.slice(0, 300)}`;
  expect(response.status, where).toBe(status);
  expect(response.headers['content-type']?.split(';')[0], where).toBe('application/problem+json');
  const body = response.body;
  expect(body.type, where).toBe(`${DEFAULT_PROBLEM_TYPE_BASE}/${slug}`);
  expect(body.title, where).toBe(PROBLEM_TYPES[slug].title);
  expect(body.status, where).toBe(status);
  expect(typeof body.detail === 'string' && body.detail.length > 0, where).toBe(true);
  expect(body.requestId, where).toBe(response.headers['x-request-id']);
  expect(Object.keys(body).filter((member) => !PROBLEM_MEMBERS.includes(member)), where).toEqual([]);
  if (code === null) expect(body.code, where).toBeUndefined();
  else if (code !== undefined) expect(body.code, where).toBe(code);
  return body;
}

/** A success answer: the status, and a JSON (never problem+json) body when there is one. */
export function expectSuccess(response: CheckedResponse, status: number): any {
  expect(response.status, `${response.status} ${response.text.slice(0, 300)}`).toBe(status);
  if (response.text !== '') expect(response.headers['content-type']?.split(';')[0]).toBe('application/json');
  return response.body;
}

/** Bearer auth plus a JSON content type, and any further headers. */
export function jsonHeaders(token: string, extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...extra };
}

/**
 * Raises every per-minute allowance and the monthly quota of a workspace far out of reach, for
 * suites that make more calls than a free plan allows and do not test the limits themselves.
 */
export async function liftCallLimits(source: StoreSource, workspaceId: string): Promise<void> {
  await createWorkspaceStore(source).setWorkspaceLimits(workspaceId, {
    readPerMinute: 1_000_000,
    writePerMinute: 1_000_000,
    aiPerMinute: 1_000_000,
    monthlyQuota: 1_000_000_000,
  });
}

/** A PAT of a demo user (the owner by default) with exactly these scopes. */
export async function makePat(
  source: StoreSource,
  workspaceId: string,
  scopes: readonly string[],
  options: { userId?: string; expiresAt?: number | null; now?: () => number } = {},
): Promise<string> {
  const issued = await issuePersonalAccessToken(createPersonalAccessTokenStore(source, options.now ? { now: options.now } : {}), {
    workspaceId,
    userId: options.userId ?? demoUsers.owner.id,
    scopes,
    expiresAt: options.expiresAt ?? null,
  });
  return issued.token;
}

export interface TestWorkspace {
  workspaceId: string;
  ownerId: string;
  projectId: string;
  /** A PAT of the owner with every scope. */
  pat: string;
  /** The owner's session token, valid for a day from `now`. */
  session: string;
}

/** A workspace of its own (owner, one project, a PAT and a session), apart from the demo's. */
export async function makeTestWorkspace(
  source: StoreSource,
  sessionSecret: Uint8Array,
  options: { plan?: WorkspacePlan; now?: () => number; name?: string } = {},
): Promise<TestWorkspace> {
  const now = options.now ?? Date.now;
  const { id: workspaceId } = await createWorkspaceStore(source, { now }).createWorkspace({ name: options.name ?? 'Test workspace', plan: options.plan ?? 'free' });
  const { id: ownerId } = await createUserStore(source, { now }).createUser({ workspaceId, role: 'owner', name: 'Test owner' });
  const { id: projectId } = await createProjectStore(source, { now }).createProject(workspaceId, { name: 'Test project' }, { id: ownerId, kind: 'USER' });
  return {
    workspaceId,
    ownerId,
    projectId,
    pat: await makePat(source, workspaceId, scopeCatalogue, { userId: ownerId, now }),
    session: makeSession(sessionSecret, { userId: ownerId, workspaceId, lifetimeSeconds: 24 * 3600, now: now() }),
  };
}

/** A genuine session token, signed as the server signs them. */
export function makeSession(
  secret: Uint8Array,
  options: { userId: string; workspaceId: string; lifetimeSeconds?: number; now?: number },
): string {
  return issueSessionToken(secret, {
    userId: options.userId,
    workspaceId: options.workspaceId,
    lifetimeSeconds: options.lifetimeSeconds ?? 3600,
    now: options.now ?? Date.now(),
  });
}

const segment = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');

/**
 * A compact JWS with any header, claims and HMAC: forged tokens for the refusal cases (`alg:
 * none` with an empty signature, HS512, another secret, altered claims).
 */
export function signJwt(header: Record<string, unknown>, claims: Record<string, unknown>, secret: Uint8Array | null, hash: 'sha256' | 'sha512' = 'sha256'): string {
  const signingInput = `${segment(header)}.${segment(claims)}`;
  const signature = secret === null ? '' : createHmac(hash, secret).update(signingInput).digest('base64url');
  return `${signingInput}.${signature}`;
}

/** The claims of a session token as the server issues them. */
export function sessionClaims(options: { userId: string; workspaceId: string; lifetimeSeconds?: number; now?: number }): Record<string, unknown> {
  const issuedAt = Math.floor((options.now ?? Date.now()) / 1000);
  return {
    iss: 'contract-api-server',
    sub: options.userId,
    aud: 'work-platform',
    wid: options.workspaceId,
    iat: issuedAt,
    exp: issuedAt + (options.lifetimeSeconds ?? 3600),
  };
}

export interface RecordedEvent {
  type: string;
  payload: { id: string; type: string; tenantId: string; actor: { id: string; kind: string }; data: { object: Record<string, unknown> } };
}

/** The outbox rows about one task or project, oldest first. */
export async function eventsAbout(store: StoreEngine, objectId: string): Promise<RecordedEvent[]> {
  const rows = await store.statement<{ type: string; payload: string }>(
    store.orm
      .select({ type: events.type, payload: events.payload })
      .from(events)
      .where(sql`${eventObjectId(store)} = ${objectId}`)
      .orderBy(events.occurredAt, ...insertionOrder(store)),
  ).objects({});
  return rows.map((row) => ({ type: row.type, payload: JSON.parse(row.payload) }));
}

function eventObjectId(store: StoreEngine): SQL {
  return store.kind === 'sqlite' ? sql`json_extract(${events.payload}, '$.data.object.id')` : sql`(cast(${events.payload} as jsonb) #>> '{data,object,id}')`;
}

/**
 * The order rows were written in: SQLite's rowid (insertion); PostgreSQL's writing transaction, then
 * the row's place in the table. On PostgreSQL an UPDATE moves a row to the end: order rows that are
 * updated by a column first, and use this only to part ties of rows written one after another.
 */
export function insertionOrder(store: StoreEngine): SQL[] {
  return [sql.raw(insertionOrderSql(store.kind))];
}

/** `insertionOrder` as SQL text, for the tests' own queries (an ORDER BY list). */
export function insertionOrderSql(kind: StoreEngine['kind']): string {
  return kind === 'sqlite' ? 'rowid' : 'cast(cast(xmin as text) as bigint), ctid';
}

export async function countRows(store: StoreEngine, table: 'tasks' | 'projects' | 'events' | 'idempotency_keys', workspaceId: string): Promise<number> {
  const tables = { tasks, projects, events, idempotency_keys: idempotencyKeys };
  const counted = tables[table];
  return store.statement<{ count: number }>(store.orm.select({ count: count() }).from(counted).where(eq(counted.workspaceId, workspaceId))).value({}) as Promise<number>;
}

/** Replaces every occurrence of each given text, to compare answers that differ only in those. */
export function withPlaceholders(text: string, replacements: Record<string, string>): string {
  let result = text;
  for (const [from, to] of Object.entries(replacements)) result = result.split(from).join(to);
  return result;
}
