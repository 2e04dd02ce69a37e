// The webhook subscription and delivery stores' behaviour on both engines: subscriptions, the
// fan-out of an event, claims, attempts and retries, replays, and the claim of due deliveries by
// two workers at once (on PostgreSQL two instances: FOR UPDATE SKIP LOCKED).
import { eq, sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { events, users, webhookDeliveries, webhookSubscriptions, workspaces } from '../../db/schema.js';
import type { StoreEngine } from '../../src/store/engine.js';
import { createProjectStore } from '../../src/store/projects.js';
import { createTaskStore, type TaskStore } from '../../src/store/tasks.js';
import {
  createWebhookDeliveryStore,
  DELIVERY_LEASE_MS,
  type AttemptOutcome,
  type ClaimedDelivery,
  type RecordingResult,
  type WebhookDeliveryStore,
} from '../../src/store/webhookDeliveries.js';
import { maximumWebhooksPerWorkspace } from '../../src/store/webhookSubscriptions.js';
import { NotFoundError, VersionConflictError, WebhookLimitError } from '../../src/store/workPlatformErrors.js';
import { createSecretBox } from '../../src/auth/secretBox.js';
import { createWebhookSubscriptions, signingKeyOverlapMs, type WebhookSubscriptions } from '../../src/webhooks/subscriptions.js';
import { storeEngines, type OpenedEngine } from '../support/engines.js';
import { memoryLogger } from '../support/testApp.js';
import { closedPort, waitFor } from '../webhooks/deliveryFixtures.js';
import { createDeliveryWorker } from '../../src/webhooks/worker/deliveryLoop.js';

const actor = { id: 'ten_main_owner', kind: 'USER' } as const;
const url = 'https://hooks.example.com/work-platform';
const box = createSecretBox(new Uint8Array(32).fill(5));
const ok = (at: number): AttemptOutcome => ({ attemptedAt: at, durationMs: 5, statusCode: 204, error: null });
const failed = (at: number): AttemptOutcome => ({ attemptedAt: at, durationMs: 5, statusCode: 500, error: null });

async function seedWorkspace(engine: StoreEngine, id: string): Promise<void> {
  await engine.write(async () => {
    await engine.statement(engine.orm.insert(workspaces).values({ id, name: id, plan: 'free', createdAt: 1 })).run({});
    await engine.statement(engine.orm.insert(users).values({ id: `${id}_owner`, workspaceId: id, role: 'owner', createdAt: 1 })).run({});
  });
}

/** The recorded attempt of a one-attempt batch; undefined when its claim was lost. */
async function recordOne(store: WebhookDeliveryStore, claimed: ClaimedDelivery, outcome: AttemptOutcome, retryAt: number | null = null) {
  const [result] = await store.recordAttempts([{ claimed, outcome, retryAt }]);
  if ('error' in result!) throw result.error;
  return 'recorded' in result! ? result.recorded : undefined;
}

describe.each(storeEngines)('webhook stores on $name', (engineCase) => {
  let opened: OpenedEngine;
  let engine: StoreEngine;
  let at: number;
  const now = () => at;
  let webhooks: WebhookSubscriptions;
  let deliveries: WebhookDeliveryStore;
  let tasks: TaskStore;
  let projectId: string;

  beforeEach(async () => {
    // One attempt per transaction: a claim that failed serialization would fail the test, not run again.
    opened = await engineCase.open({ maxAttempts: 1 });
    engine = opened.engine;
    at = Date.UTC(2026, 10, 23, 9, 41);
    await seedWorkspace(engine, 'ten_main');
    await seedWorkspace(engine, 'ten_other');
    projectId = (await createProjectStore(engine, { now }).createProject('ten_main', { name: 'Main' }, actor)).id;
    webhooks = createWebhookSubscriptions(engine, { secretBox: box, now, resolver: false });
    deliveries = createWebhookDeliveryStore(engine, { now });
    tasks = createTaskStore(engine, { now });
  });
  afterEach(() => opened.close());

  /** A task created one millisecond after the last: its task.created event, due now. */
  async function createTask(title = 'Deliver me'): Promise<void> {
    at += 1;
    await tasks.createTask('ten_main', { projectId, title }, actor);
  }

  const deliveryRows = (subscriptionId: string) =>
    engine
      .statement<typeof webhookDeliveries.$inferSelect>(
        engine.orm.select().from(webhookDeliveries).where(eq(webhookDeliveries.subscriptionId, sql.placeholder('id'))).orderBy(webhookDeliveries.createdAt, webhookDeliveries.id),
      )
      .objects({ id: subscriptionId });

  it('creates, reads, pages, updates with If-Match, rotates the key of and deletes a subscription', async () => {
    const { webhook, secret } = await webhooks.createWebhook('ten_main', { url, eventTypes: ['task.created'], description: 'First' });
    expect(box.open((await deliveries.oldestSealedSecret())!.sealedSecret, webhook.id)).toBe(secret);
    expect(await webhooks.getWebhook('ten_main', webhook.id)).toEqual(webhook);
    expect(await webhooks.getWebhook('ten_other', webhook.id)).toBeUndefined();
    at += 1000;
    const second = (await webhooks.createWebhook('ten_main', { url, eventTypes: ['task.completed', 'task.created'] })).webhook;

    const first = await webhooks.listWebhooks('ten_main', { limit: 1 });
    expect(first.items.map((item) => item.id)).toEqual([second.id]);
    const next = await webhooks.listWebhooks('ten_main', { limit: 1, after: first.nextAfter });
    expect(next).toEqual({ items: [webhook], nextAfter: null });

    const updated = await webhooks.updateWebhook('ten_main', webhook.id, { description: 'Renamed', eventTypes: ['task.created', 'task.deleted'] }, 1);
    expect(updated).toMatchObject({ version: 2, description: 'Renamed', eventTypes: ['task.created', 'task.deleted'] });
    await expect(webhooks.updateWebhook('ten_main', webhook.id, { description: 'Stale' }, 1)).rejects.toBeInstanceOf(VersionConflictError);

    const rotation = await webhooks.rotateWebhookKey('ten_main', webhook.id);
    expect(rotation).toMatchObject({ id: webhook.id, signingKeyVersion: 2, previousSigningKeyExpiresAt: new Date(at + signingKeyOverlapMs).toISOString() });
    expect(await webhooks.getWebhook('ten_main', webhook.id)).toMatchObject({ version: 3, signingKeyVersion: 2 });
    at += signingKeyOverlapMs;
    expect(await deliveries.endExpiredRotationOverlaps()).toBe(1);

    await expect(webhooks.deleteWebhook('ten_main', webhook.id, 2)).rejects.toBeInstanceOf(VersionConflictError);
    await webhooks.deleteWebhook('ten_main', webhook.id, 3);
    await expect(webhooks.deleteWebhook('ten_main', webhook.id, null)).rejects.toBeInstanceOf(NotFoundError);
  });

  it(`refuses a subscription beyond ${maximumWebhooksPerWorkspace} per workspace`, async () => {
    for (let index = 0; index < maximumWebhooksPerWorkspace; index += 1) await webhooks.createWebhook('ten_main', { url, eventTypes: ['task.created'] });
    await expect(webhooks.createWebhook('ten_main', { url, eventTypes: ['task.created'] })).rejects.toBeInstanceOf(WebhookLimitError);
    await webhooks.createWebhook('ten_other', { url, eventTypes: ['task.created'] });
  });

  it('fans an event out to the ACTIVE subscriptions listing its type; claim, failed attempt, retry on schedule, success', async () => {
    const listening = (await webhooks.createWebhook('ten_main', { url, eventTypes: ['task.completed', 'task.created'] })).webhook;
    const otherType = (await webhooks.createWebhook('ten_main', { url, eventTypes: ['task.completed'] })).webhook;
    const disabled = (await webhooks.createWebhook('ten_main', { url, eventTypes: ['task.created'] })).webhook;
    await webhooks.updateWebhook('ten_main', disabled.id, { status: 'DISABLED' }, 1);
    await createTask();
    expect(await deliveryRows(otherType.id)).toEqual([]);
    expect(await deliveryRows(disabled.id)).toEqual([]);
    const [queued] = await deliveryRows(listening.id);
    expect(queued).toMatchObject({ status: 'PENDING', attemptCount: 0, replay: false, nextAttemptAt: at });

    const [claimed] = await deliveries.claimDue('wkr_a', 10);
    expect(claimed).toMatchObject({ id: queued!.id, eventId: queued!.eventId, subscriptionId: listening.id, attemptCount: 0, leaseExpiresAt: at + DELIVERY_LEASE_MS });
    expect(claimed!.leaseToken).toMatch(/^wkr_a\.[0-9a-f]{16}$/);
    expect(JSON.parse(claimed!.payload)).toMatchObject({ id: queued!.eventId, type: 'task.created' });
    expect(await deliveries.claimDue('wkr_b', 10)).toEqual([]);

    const retryAt = at + 30_000;
    expect(await recordOne(deliveries, claimed!, failed(at), retryAt)).toEqual({ number: 1, succeeded: false, status: 'PENDING', nextAttemptAt: retryAt });
    at = retryAt - 1;
    expect(await deliveries.claimDue('wkr_a', 10)).toEqual([]);
    at = retryAt;
    const [again] = await deliveries.claimDue('wkr_a', 10);
    expect(again).toMatchObject({ id: claimed!.id, eventId: claimed!.eventId, attemptCount: 1 });
    expect(await recordOne(deliveries, again!, ok(at))).toEqual({ number: 2, succeeded: true, status: 'SUCCEEDED', nextAttemptAt: null });

    const log = await webhooks.listWebhookDeliveries('ten_main', listening.id, { limit: 10 });
    expect(log.items).toHaveLength(1);
    expect(log.items[0]).toMatchObject({ id: claimed!.id, status: 'SUCCEEDED', replay: false, completedAt: new Date(at).toISOString() });
    expect(log.items[0]!.attempts.map((attempt) => [attempt.number, attempt.statusCode, attempt.succeeded])).toEqual([
      [1, 500, false],
      [2, 204, true],
    ]);
    await expect(webhooks.listWebhookDeliveries('ten_other', listening.id, { limit: 10 })).rejects.toBeInstanceOf(NotFoundError);
  });

  it('cancels, instead of claiming, a due delivery whose subscription is DISABLED', async () => {
    const { webhook } = await webhooks.createWebhook('ten_main', { url, eventTypes: ['task.created'] });
    await createTask();
    // Disabled behind the store's back (the store's own disabling cancels the pending deliveries at once).
    await engine.write(() =>
      engine
        .statement(engine.orm.update(webhookSubscriptions).set({ status: 'DISABLED', disabledCode: 'MANUAL', disabledMessage: 'off', disabledAt: at }))
        .run({}),
    );
    expect(await deliveries.claimDue('wkr_a', 10)).toEqual([]);
    expect(await deliveryRows(webhook.id)).toMatchObject([{ status: 'CANCELLED', nextAttemptAt: null, completedAt: at, leaseOwner: null }]);
  });

  it('takes over an expired claim with the same event id; the dead claim cannot record over it', async () => {
    await webhooks.createWebhook('ten_main', { url, eventTypes: ['task.created'] });
    await createTask();
    const other = createWebhookDeliveryStore(engineCase.name === 'PostgreSQL' ? await opened.openAnother() : engine, { now });
    const [dead] = await deliveries.claimDue('wkr_dead', 10);
    at += DELIVERY_LEASE_MS - 1;
    expect(await other.claimDue('wkr_b', 10)).toEqual([]);
    at += 1;
    const [takenOver] = await other.claimDue('wkr_b', 10);
    expect(takenOver).toMatchObject({ id: dead!.id, eventId: dead!.eventId, attemptCount: 0 });
    expect(takenOver!.leaseToken).not.toBe(dead!.leaseToken);
    expect(await recordOne(deliveries, dead!, ok(at))).toBeUndefined();
    expect(await recordOne(other, takenOver!, ok(at))).toMatchObject({ number: 1, status: 'SUCCEEDED' });
  });

  // SQLite announces no commit: its workers poll PRAGMA data_version (test/webhooks/deliveryWorker.test.ts proves that).
  it.runIf(engineCase.name === 'PostgreSQL')('wakes a worker of another instance, with no sweep, when a commit queues deliveries (LISTEN/NOTIFY)', async () => {
    const port = await closedPort();
    const { webhook } = await webhooks.createWebhook('ten_main', { url: `https://hooks.example.com:${port}/work-platform`, eventTypes: ['task.created'] });
    const worker = createDeliveryWorker({
      db: await opened.openAnother(),
      secretBox: box,
      logger: memoryLogger([]),
      allowLoopback: true,
      // The subscriber's host resolves to a closed port here: the attempt fails at once, and is recorded.
      lookup: async () => [{ address: '127.0.0.1', family: 4 }],
      now,
      retrySweep: false,
      commitPollMs: false,
    });
    await worker.start();
    try {
      await worker.idle();
      await createTask();
      await waitFor(async () => (await deliveryRows(webhook.id))[0]?.attemptCount === 1, 'the worker of the other instance, woken by the commit', 10_000);
    } finally {
      await worker.stop();
    }
  });

  it('lets two workers claim at once (on PostgreSQL two instances) without ever handing out one delivery twice', async () => {
    await webhooks.createWebhook('ten_main', { url, eventTypes: ['task.created'] });
    await webhooks.createWebhook('ten_main', { url, eventTypes: ['task.created'] });
    for (let index = 0; index < 10; index += 1) await createTask(`Task ${index}`);
    // On SQLite a second connection of this process would block the thread on the file's lock
    // while the first waits for its turn: two processes are what BEGIN IMMEDIATE serializes.
    const other = engineCase.name === 'PostgreSQL' ? await opened.openAnother() : engine;
    const workers = [deliveries, createWebhookDeliveryStore(other, { now })];
    const claims: { owner: string; delivery: ClaimedDelivery }[] = [];
    for (;;) {
      const rounds = await Promise.all(workers.map((worker, index) => worker.claimDue(`wkr_${index}`, 3)));
      if (rounds.every((round) => round.length === 0)) break;
      rounds.forEach((round, index) => claims.push(...round.map((delivery) => ({ owner: `wkr_${index}`, delivery }))));
    }
    expect(claims).toHaveLength(20);
    expect(new Set(claims.map(({ delivery }) => delivery.id)).size).toBe(20);
    const rows = new Map((await engine.statement<typeof webhookDeliveries.$inferSelect>(engine.orm.select().from(webhookDeliveries)).objects({})).map((row) => [row.id, row]));
    for (const { owner, delivery } of claims) {
      expect(delivery.leaseToken.startsWith(`${owner}.`)).toBe(true);
      expect(rows.get(delivery.id)!.leaseOwner).toBe(delivery.leaseToken);
    }
    const results: RecordingResult[] = await deliveries.recordAttempts(claims.map(({ delivery }) => ({ claimed: delivery, outcome: ok(at), retryAt: null })));
    expect(results.every((result) => 'recorded' in result)).toBe(true);
  });

  it.runIf(engineCase.name === 'PostgreSQL')('skips the deliveries another claim holds locked instead of waiting for them', async () => {
    await webhooks.createWebhook('ten_main', { url, eventTypes: ['task.created'] });
    for (let index = 0; index < 4; index += 1) await createTask(`Task ${index}`);
    const other = createWebhookDeliveryStore(await opened.openAnother(), { now });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let claimedInside!: (claimed: ClaimedDelivery[]) => void;
    const held = new Promise<ClaimedDelivery[]>((resolve) => (claimedInside = resolve));
    // A claim whose transaction stays open, its rows locked, until the other instance has claimed.
    const holding = engine.write(async () => {
      claimedInside(await deliveries.claimDue('wkr_a', 2));
      await released;
    });
    const first = await held;
    const second = await other.claimDue('wkr_b', 10);
    release();
    await holding;
    expect(first).toHaveLength(2);
    expect(second).toHaveLength(2);
    expect(new Set([...first, ...second].map((delivery) => delivery.id)).size).toBe(4);
  });

  it('replays one event or a range of the listed types, keeping the event ids, as new claimable deliveries', async () => {
    const { webhook } = await webhooks.createWebhook('ten_main', { url, eventTypes: ['task.created'] });
    const from = at;
    await createTask('one');
    await createTask('two');
    const [firstEvent] = await engine.statement<{ id: string }>(engine.orm.select({ id: events.id }).from(events).where(eq(events.type, 'task.created')).orderBy(events.occurredAt)).objects({});
    for (const claimed of await deliveries.claimDue('wkr_a', 10)) await recordOne(deliveries, claimed, ok(at));
    at += 1000;

    const single = await webhooks.replayWebhookEvents('ten_main', webhook.id, { eventId: firstEvent!.id });
    expect(single).toMatchObject({ subscriptionId: webhook.id, eventCount: 1, deliveries: [{ eventId: firstEvent!.id, eventType: 'task.created' }] });
    // project.created lies in the range too, but the subscription does not list it.
    const range = await webhooks.replayWebhookEvents('ten_main', webhook.id, { from: new Date(from - 1000).toISOString(), to: new Date(at + 1).toISOString() });
    expect(range.eventCount).toBe(2);
    expect(range.deliveries[0]!.eventId).toBe(firstEvent!.id);

    const replayed = await deliveries.claimDue('wkr_a', 10);
    expect(replayed.map((delivery) => delivery.id).sort()).toEqual([...single.deliveries, ...range.deliveries].map((delivery) => delivery.id).sort());
    expect(replayed.every((delivery) => delivery.replay)).toBe(true);
    const log = await webhooks.listWebhookDeliveries('ten_main', webhook.id, { limit: 2 });
    expect(log.items.every((item) => item.replay)).toBe(true);
    const rest = await webhooks.listWebhookDeliveries('ten_main', webhook.id, { limit: 10, after: log.nextAfter });
    expect(rest.items.map((item) => item.replay)).toEqual([true, false, false]);
  });
});
