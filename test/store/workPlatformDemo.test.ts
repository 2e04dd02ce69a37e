import { scopeCatalogue } from '../../generated/work-platform/rules.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadDemoData } from '../../src/demo/demoData.js';
import { demoUsers, demoWorkspaces } from '../../src/demo/workPlatformDemo.js';
import { openDatabase } from '../../src/store/database.js';
import { hashPersonalAccessToken } from '../../src/auth/patFormat.js';
import { createPersonalAccessTokenStore } from '../../src/store/personalAccessTokens.js';
import { createContractStore } from '../../src/store/contracts.js';
import { createProjectStore } from '../../src/store/projects.js';
import { verifySessionToken } from '../../src/auth/sessionTokens.js';
import { createTaskStore, type Task } from '../../src/store/tasks.js';
import { createUserStore } from '../../src/store/users.js';
import { outboxEventTypes } from '../../src/store/outboxEvents.js';
import { createWebhookSubscriptionStore } from '../../src/store/webhookSubscriptions.js';
import { createSecretBox, loadSealingBox } from '../../src/auth/secretBox.js';
import { makeClock, makeDatabase, type TempDatabase } from './factories.js';
import { makeWorkspace } from './workPlatformFactories.js';

let t: TempDatabase;
const clock = makeClock(Date.UTC(2026, 10, 23, 9, 41, 0));
const secret = new Uint8Array(32).fill(42);
beforeEach(() => {
  t = makeDatabase();
});
afterEach(() => t.cleanup());

const load = async () => (await loadDemoData(t.db, clock.now, { sessionSecret: secret })).workPlatform;
const allTasks = async (workspaceId: string): Promise<Task[]> => (await createTaskStore(t.db).listTasks(workspaceId, { sort: 'createdAt', order: 'asc', limit: 1000 })).items;

describe('Work-Platform demo data', () => {
  it('returns exactly the fixture members of the issue', async () => {
    const demo = await load();
    expect(Object.keys(demo).sort()).toEqual(['allowedOrigin', 'connectors', 'contracts', 'crm', 'oauthClient', 'otherWorkspace', 'plan', 'projectId', 'taskIds', 'tokens', 'webhook', 'workspaceId']);
    expect(Object.keys(demo.tokens).sort()).toEqual(['all', 'expiredSession', 'memberSession', 'noScopes', 'readOnly', 'revoked', 'session']);
    expect(Object.keys(demo.otherWorkspace).sort()).toEqual(['companyId', 'connectorId', 'contactId', 'contractId', 'dealId', 'projectId', 'taskId', 'token', 'webhookId', 'workspaceId']);
    expect(demo).toMatchObject({
      workspaceId: demoWorkspaces.main.id,
      plan: 'free',
      projectId: expect.stringMatching(/^prj_[A-Za-z0-9]+$/),
      webhook: { id: 'whk_Q7mXc2VbN9pLr4TzK8sD', url: 'https://hooks.example.com/work-platform', secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/) },
      allowedOrigin: 'http://localhost:5173',
      oauthClient: { id: 'ocl_demoNorthwindCli', redirectUri: 'http://127.0.0.1:8976/callback', scopes: [...scopeCatalogue] },
      otherWorkspace: {
        workspaceId: demoWorkspaces.other.id,
        projectId: expect.stringMatching(/^prj_/),
        taskId: expect.stringMatching(/^tsk_/),
        webhookId: expect.stringMatching(/^whk_/),
        token: expect.stringMatching(/^svc_pat_[A-Za-z0-9_-]{43}$/),
      },
    });
    expect(demo.otherWorkspace.workspaceId).not.toBe(demo.workspaceId);
  });

  it("holds a contract in each status, with the ids the contract's path examples name, the same on every load", async () => {
    const demo = await load();
    const contracts = createContractStore(t.db, { now: clock.now });
    const statusOf = async (id: string) => (await contracts.getContract(demo.workspaceId, id))!.status;
    expect(await Promise.all(['draft', 'sent', 'signed', 'declined', 'expired'].map((status) => statusOf(demo.contracts[status as 'draft'])))).toEqual(['draft', 'sent', 'signed', 'declined', 'expired']);
    const spec = (name: string) => readFileSync(path.join('specs/work-platform', name), 'utf8');
    expect(spec('components/parameters/ContractId.yaml')).toContain(`example: ${demo.contracts.example}`);
    expect(await statusOf(demo.contracts.example)).toBe('draft');
    for (const [move, id, status] of [['send', demo.contracts.toSend, 'draft'], ['sign', demo.contracts.toSign, 'sent'], ['decline', demo.contracts.toDecline, 'sent'], ['withdraw', demo.contracts.toWithdraw, 'sent']] as const) {
      expect(spec(`paths/contract-${move}.yaml`)).toContain(`example: ${id}`);
      expect(await statusOf(id)).toBe(status);
    }
    expect(spec('components/schemas/ContractCreate.yaml')).toContain(`dealId: ${demo.crm.dealIds[0]}`);
    expect((await load()).contracts).toEqual(demo.contracts);
    expect((await contracts.getContract(demo.otherWorkspace.workspaceId, demo.otherWorkspace.contractId))!.status).toBe('draft');
  });

  it('holds one GitHub connector in each status in the main workspace (the connected one sealed, never in clear), and one never connected in the other', async () => {
    const demo = await load();
    const rows = t.db.prepare('SELECT id, workspace_id AS workspaceId, status, sealed_credential AS sealed, credential_expires_at AS expiresAt FROM connectors ORDER BY id').all() as { id: string; workspaceId: string; status: string; sealed: string | null; expiresAt: number | null }[];
    expect(rows.map(({ id, workspaceId, status }) => [id, workspaceId, status])).toEqual([
      [demo.otherWorkspace.connectorId, demoWorkspaces.other.id, 'not_connected'],
      [demo.connectors.connected, demo.workspaceId, 'connected'],
      [demo.connectors.expired, demo.workspaceId, 'connected'],
      [demo.connectors.disconnected, demo.workspaceId, 'disconnected'],
    ]);
    // The expired one is stored connected with an expiry long past: it shows (and answers) as expired.
    expect(rows[2]!.expiresAt).toBeLessThan(clock.now());
    expect(rows[1]!.sealed).toMatch(/^v2\.k0\./);
    expect(JSON.stringify(rows)).not.toContain('ghp_');
    // Loading again replaces them: still four.
    await load();
    expect((t.db.prepare('SELECT count(*) AS n FROM connectors').get() as { n: number }).n).toBe(4);
  });

  it('registers one public OAuth client for the main workspace, once, however often the demo is loaded', async () => {
    await load();
    await load();
    const clients = t.db.prepare('SELECT id, workspace_id, secret_hash FROM oauth_clients').all();
    expect(clients).toEqual([{ id: 'ocl_demoNorthwindCli', workspace_id: demoWorkspaces.main.id, secret_hash: null }]);
  });

  it('holds over 120 tasks in three projects (and one empty project), with ties on dueOn, priority and title and some null dueOn', async () => {
    const demo = await load();
    const tasks = await allTasks(demo.workspaceId);
    expect(tasks.length).toBeGreaterThanOrEqual(120);
    expect(tasks.map((task) => task.id).sort()).toEqual([...demo.taskIds].sort());
    expect(new Set(demo.taskIds).size).toBe(demo.taskIds.length);

    const projects = (await createProjectStore(t.db).listProjects(demo.workspaceId, { sort: 'createdAt', order: 'asc', limit: 100 })).items;
    expect(projects.map((project) => project.name)).toEqual(['Website relaunch', 'Mobile app 2.0', 'Customer onboarding', 'Someday']);
    expect(projects[0]!.id).toBe(demo.projectId);
    for (const project of projects.slice(0, 3)) expect(tasks.filter((task) => task.projectId === project.id).length).toBeGreaterThan(20);
    expect(tasks.filter((task) => task.projectId === projects[3]!.id)).toEqual([]);

    const tally = (values: (string | null)[]) => values.reduce((counts, value) => counts.set(value, (counts.get(value) ?? 0) + 1), new Map<string | null, number>());
    const dueOn = tally(tasks.map((task) => task.dueOn));
    expect(dueOn.get(null)).toBeGreaterThanOrEqual(10);
    expect([...dueOn].filter(([value, count]) => value !== null && count > 1).length).toBeGreaterThan(5);
    expect(new Set(tasks.map((task) => task.priority))).toEqual(new Set(['LOW', 'MEDIUM', 'HIGH']));
    expect([...tally(tasks.map((task) => task.title)).values()].some((count) => count > 2)).toBe(true);
    expect([...tally(tasks.map((task) => task.createdAt)).values()].some((count) => count > 1)).toBe(true);
    expect(new Set(tasks.map((task) => task.status))).toEqual(new Set(['TODO', 'IN_PROGRESS', 'BLOCKED', 'DONE']));
    expect(tasks.some((task) => task.version > 1 && task.updatedAt !== task.createdAt)).toBe(true);
    expect(new Set(tasks.map((task) => task.assigneeId))).toEqual(new Set([demoUsers.owner.id, demoUsers.admin.id, demoUsers.member.id, null]));
    for (const task of tasks) expect(task.title).not.toMatch(/^Task \d+$/);
  });

  it('keeps the other workspace\'s project and task out of the demo workspace', async () => {
    const demo = await load();
    const tasks = createTaskStore(t.db);
    expect(await tasks.getTask(demo.workspaceId, demo.otherWorkspace.taskId)).toBeUndefined();
    expect(await tasks.getTask(demo.otherWorkspace.workspaceId, demo.otherWorkspace.taskId)).toMatchObject({ projectId: demo.otherWorkspace.projectId });
    expect((await allTasks(demo.otherWorkspace.workspaceId)).map((task) => task.id)).toEqual([demo.otherWorkspace.taskId]);
    expect(await createProjectStore(t.db).getProject(demo.workspaceId, demo.otherWorkspace.projectId)).toBeUndefined();
  });

  it('issues PATs of every kind and session tokens signed with the given key', async () => {
    const demo = await load();
    const pats = createPersonalAccessTokenStore(t.db);
    const find = (token: string) => pats.findPatCaller(hashPersonalAccessToken(token));
    expect(await find(demo.tokens.all)).toMatchObject({ workspaceId: demo.workspaceId, scopes: [...scopeCatalogue], revokedAt: null, expiresAt: null });
    expect(await find(demo.tokens.readOnly)).toMatchObject({ workspaceId: demo.workspaceId, scopes: ['tasks:read'], revokedAt: null });
    expect(await find(demo.tokens.noScopes)).toMatchObject({ workspaceId: demo.workspaceId, scopes: [], revokedAt: null });
    expect(await find(demo.tokens.revoked)).toMatchObject({ workspaceId: demo.workspaceId, scopes: [...scopeCatalogue], revokedAt: expect.any(Number) });
    expect(await find(demo.otherWorkspace.token)).toMatchObject({ workspaceId: demo.otherWorkspace.workspaceId, scopes: [...scopeCatalogue], revokedAt: null });

    const users = createUserStore(t.db);
    const owner = await verifySessionToken(secret, demo.tokens.session, clock.now());
    const member = await verifySessionToken(secret, demo.tokens.memberSession, clock.now());
    expect(owner).toMatchObject({ ok: true, workspaceId: demo.workspaceId });
    expect(member).toMatchObject({ ok: true, workspaceId: demo.workspaceId });
    expect(owner.ok && (await users.getUser(owner.userId))?.role).toBe('owner');
    expect(member.ok && (await users.getUser(member.userId))?.role).toBe('member');
    expect(await verifySessionToken(secret, demo.tokens.session, clock.now() + 23 * 3600_000)).toMatchObject({ ok: true });
    expect(await verifySessionToken(secret, demo.tokens.expiredSession, clock.now())).toEqual({ ok: false, reason: 'expired' });
    expect(await verifySessionToken(new Uint8Array(32), demo.tokens.session, clock.now())).toEqual({ ok: false, reason: 'invalid' });
  });

  it('signs with the server\'s key by default: the session-jwt.key beside the database file', async () => {
    const previous = process.env.SESSION_JWT_SECRET;
    delete process.env.SESSION_JWT_SECRET;
    try {
      const demo = (await loadDemoData(t.db, clock.now)).workPlatform;
      const keyFile = path.join(path.dirname(t.path), 'session-jwt.key');
      const fileSecret = new Uint8Array(Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'base64url'));
      expect(await verifySessionToken(fileSecret, demo.tokens.session, clock.now())).toMatchObject({ ok: true });
      const configured = Buffer.alloc(32, 9);
      process.env.SESSION_JWT_SECRET = configured.toString('base64url');
      const again = (await loadDemoData(t.db, clock.now)).workPlatform;
      expect(await verifySessionToken(new Uint8Array(configured), again.tokens.session, clock.now())).toMatchObject({ ok: true });
    } finally {
      if (previous === undefined) delete process.env.SESSION_JWT_SECRET;
      else process.env.SESSION_JWT_SECRET = previous;
    }
  });

  it('loads into an in-memory database without writing a key file', async () => {
    const db = openDatabase(':memory:');
    try {
      expect((await loadDemoData(db, clock.now)).workPlatform.taskIds.length).toBeGreaterThanOrEqual(120);
    } finally {
      db.close();
    }
  });

  it('leaves no outbox rows: demo content is seed data, not activity', async () => {
    await load();
    expect(t.db.prepare('SELECT count(*) FROM events').pluck().get()).toBe(0);
  });

  it('is idempotent: reloading recreates the same projects and tasks, keeps users and earlier tokens, issues new ones', async () => {
    const first = await load();
    const counts = () =>
      Object.fromEntries(['workspaces', 'users', 'projects', 'tasks', 'events'].map((table) => [table, t.db.prepare(`SELECT count(*) FROM ${table}`).pluck().get()]));
    const before = counts();
    const titles = (await allTasks(first.workspaceId)).map((task) => [task.id, task.title, task.priority, task.status]);
    clock.advance(60_000);
    const second = await load();
    expect(counts()).toEqual(before);
    expect(second.taskIds).toEqual(first.taskIds);
    expect(second.projectId).toBe(first.projectId);
    expect(second.otherWorkspace.taskId).toBe(first.otherWorkspace.taskId);
    expect((await allTasks(second.workspaceId)).map((task) => [task.id, task.title, task.priority, task.status])).toEqual(titles);
    expect(second.tokens.all).not.toBe(first.tokens.all);
    expect((await createPersonalAccessTokenStore(t.db).findPatCaller(hashPersonalAccessToken(first.tokens.all)))?.revokedAt).toBeNull();
  });

  it('holds one ACTIVE subscription to every event type under the contract\'s example id, its secret sealed with the given box', async () => {
    const box = createSecretBox(new Uint8Array(32).fill(7));
    const demo = (await loadDemoData(t.db, clock.now, { sessionSecret: secret, webhookSecretBox: box })).workPlatform;
    const webhooks = createWebhookSubscriptionStore(t.db, { now: clock.now });
    expect(await webhooks.getWebhook(demo.workspaceId, demo.webhook.id)).toMatchObject({
      id: 'whk_Q7mXc2VbN9pLr4TzK8sD',
      url: 'https://hooks.example.com/work-platform',
      eventTypes: [...outboxEventTypes],
      status: 'ACTIVE',
      signingKeyVersion: 1,
      version: 1,
    });
    expect(await webhooks.getWebhook(demo.workspaceId, demo.otherWorkspace.webhookId)).toBeUndefined();
    expect(await webhooks.getWebhook(demo.otherWorkspace.workspaceId, demo.otherWorkspace.webhookId)).toMatchObject({ status: 'ACTIVE' });
    const sealed = t.db.prepare('SELECT sealed_secret FROM webhook_subscriptions WHERE id = ?').pluck().get(demo.webhook.id) as string;
    expect(sealed).not.toContain(demo.webhook.secret);
    expect(box.open(sealed, demo.webhook.id)).toBe(demo.webhook.secret);
  });

  it('leaves no deliveries, and a reload replaces the subscriptions (same ids, new secret)', async () => {
    const first = await load();
    const counts = () => t.db.prepare('SELECT (SELECT count(*) FROM webhook_subscriptions) AS subscriptions, (SELECT count(*) FROM webhook_deliveries) AS deliveries').get();
    expect(counts()).toEqual({ subscriptions: 2, deliveries: 0 });
    const second = await load();
    expect(counts()).toEqual({ subscriptions: 2, deliveries: 0 });
    expect(second.webhook.id).toBe(first.webhook.id);
    expect(second.webhook.secret).not.toBe(first.webhook.secret);
  });

  it('seals with the server\'s box by default: the webhook-secrets.key beside the database file', async () => {
    const previous = process.env.WEBHOOK_SECRET_KEY;
    delete process.env.WEBHOOK_SECRET_KEY;
    try {
      const demo = (await loadDemoData(t.db, clock.now)).workPlatform;
      const box = loadSealingBox({ webhookSecretKey: undefined, dataDirectory: path.dirname(t.path) });
      const sealed = t.db.prepare('SELECT sealed_secret FROM webhook_subscriptions WHERE id = ?').pluck().get(demo.webhook.id) as string;
      expect(box.open(sealed, demo.webhook.id)).toBe(demo.webhook.secret);
    } finally {
      if (previous !== undefined) process.env.WEBHOOK_SECRET_KEY = previous;
    }
  });

  it('leaves other workspaces alone', async () => {
    const own = await makeWorkspace(t.db, { name: 'Not a demo' });
    const projectId = (await createProjectStore(t.db).createProject(own.workspaceId, { name: 'Mine' }, own.actor)).id;
    const task = await createTaskStore(t.db).createTask(own.workspaceId, { projectId, title: 'Keep me' }, own.actor);
    await load();
    await load();
    expect(await createTaskStore(t.db).getTask(own.workspaceId, task.id)).toEqual(task);
    expect(t.db.prepare('SELECT count(*) FROM events WHERE workspace_id = ?').pluck().get(own.workspaceId)).toBe(2);
  });
});
