import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';
import type { Task } from '../../src/store/tasks.js';
import { createOutboxRecorder, onDeliveriesQueued } from '../../src/store/outboxEvents.js';
import { sqliteEngine } from '../../src/store/engine.js';
import {
  createWebhookDeliveryStore,
  DELIVERY_LEASE_MS,
  WEBHOOK_LOG_RETENTION_MS,
  type AttemptOutcome,
  type AttemptToRecord,
  type ClaimedDelivery,
  type WebhookDeliveryStore,
} from '../../src/store/webhookDeliveries.js';
import {
  attemptsOf,
  deliveriesOf,
  insertSubscription,
  makeDeliveryFixture,
  subscriptionRow,
  testSecretBox,
  type DeliveryFixture,
} from '../webhooks/deliveryFixtures.js';
import { makeWorkspace } from './workPlatformFactories.js';

/** One attempt through recordAttempts: its record, or undefined when the claim was lost. */
async function recordOne(store: WebhookDeliveryStore, claimed: AttemptToRecord['claimed'], outcome: AttemptToRecord['outcome'], retryAt: number | null = null) {
  const [result] = await store.recordAttempts([{ claimed, outcome, retryAt }]);
  if ('error' in result!) throw result.error;
  return 'recorded' in result! ? result.recorded : undefined;
}

const URL = 'https://hooks.example.com/in';
const ok = (at: number): AttemptOutcome => ({ attemptedAt: at, durationMs: 5, statusCode: 204, error: null });
const failed = (at: number, statusCode = 500): AttemptOutcome => ({ attemptedAt: at, durationMs: 5, statusCode, error: null });

let fx: DeliveryFixture;
afterEach(() => fx?.cleanup());

describe('fan-out in the outbox transaction', () => {
  it('queues one PENDING delivery per ACTIVE subscription of the workspace that lists the type, due when the event occurred', async () => {
    fx = await makeDeliveryFixture();
    const { workspaceId } = fx.workspace;
    const created = insertSubscription(fx.db, { workspaceId, url: URL, eventTypes: ['task.created'] });
    const both = insertSubscription(fx.db, { workspaceId, url: URL, eventTypes: ['task.completed', 'task.created'] });
    const completedOnly = insertSubscription(fx.db, { workspaceId, url: URL, eventTypes: ['task.completed'] });
    const disabled = insertSubscription(fx.db, { workspaceId, url: URL, eventTypes: ['task.created'], status: 'DISABLED' });
    const other = await makeWorkspace(fx.db, { now: fx.clock.now });
    const elsewhere = insertSubscription(fx.db, { workspaceId: other.workspaceId, url: URL, eventTypes: ['task.created'] });
    // A type name that only contains the wanted one must not match.
    const lookalike = insertSubscription(fx.db, { workspaceId, url: URL, eventTypes: ['task.created.v2'] });

    const task = await fx.createTask();
    const event = fx.db.prepare("SELECT id, occurred_at FROM events WHERE type = 'task.created'").get() as { id: string; occurred_at: number };

    for (const subscription of [created, both]) {
      const rows = deliveriesOf(fx.db, subscription.id);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        event_id: event.id,
        event_type: 'task.created',
        status: 'PENDING',
        attempt_count: 0,
        next_attempt_at: event.occurred_at,
        created_at: event.occurred_at,
        replay: 0,
        lease_owner: null,
        completed_at: null,
      });
      expect(rows[0]!.id).toMatch(/^dlv_[A-Za-z0-9]{20}$/);
    }
    for (const subscription of [completedOnly, disabled, elsewhere, lookalike]) expect(deliveriesOf(fx.db, subscription.id)).toEqual([]);

    await fx.completeTask(task);
    expect(deliveriesOf(fx.db, both.id).map((row) => row.event_type)).toEqual(['task.created', 'task.completed']);
    expect(deliveriesOf(fx.db, completedOnly.id).map((row) => row.event_type)).toEqual(['task.completed']);
  });

  it('a rolled-back change leaves no event and no delivery', async () => {
    fx = await makeDeliveryFixture();
    const { workspaceId } = fx.workspace;
    insertSubscription(fx.db, { workspaceId, url: URL, eventTypes: ['task.created'] });
    const engine = sqliteEngine(fx.db);
    const outbox = createOutboxRecorder(engine, (size) => new Uint8Array(size).map(() => Math.floor(Math.random() * 256)));
    const eventsBefore = fx.db.prepare('SELECT count(*) AS n FROM events').get() as { n: number };
    await expect(
      engine.write(async () => {
        await outbox.record(workspaceId, 'task.created', fx.workspace.actor, fx.clock.now(), { id: 'tsk_x', status: 'TODO' } as Task);
        throw new Error('the change fails after its event was recorded');
      }),
    ).rejects.toThrow('the change fails');
    expect(fx.db.prepare('SELECT count(*) AS n FROM events').get()).toEqual(eventsBefore);
    expect(fx.db.prepare('SELECT count(*) AS n FROM webhook_deliveries').get()).toEqual({ n: 0 });

    // A task store write refused by a CHECK rolls back the same way.
    await expect(fx.createTask('x'.repeat(201))).rejects.toThrow();
    expect(fx.db.prepare('SELECT count(*) AS n FROM webhook_deliveries').get()).toEqual({ n: 0 });
  });

  it('tells the listeners of the connection after the commit, not before', async () => {
    fx = await makeDeliveryFixture();
    insertSubscription(fx.db, { workspaceId: fx.workspace.workspaceId, url: URL, eventTypes: ['task.created'] });
    const seen: number[] = [];
    const unsubscribe = onDeliveriesQueued(fx.db, () => seen.push((fx.db.prepare('SELECT count(*) AS n FROM webhook_deliveries').get() as { n: number }).n));
    await fx.createTask();
    expect(seen).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([1]);
    unsubscribe();
    await fx.createTask();
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([1]);
  });
});

describe('claims and leases', () => {
  it('leases for the configured time (WEBHOOK_DELIVERY_LEASE_SECONDS), and another owner takes the delivery over once it lapses', async () => {
    fx = await makeDeliveryFixture();
    insertSubscription(fx.db, { workspaceId: fx.workspace.workspaceId, url: URL });
    await fx.createTask();
    const store = createWebhookDeliveryStore(fx.db, { now: fx.clock.now, leaseMs: 16_000 });
    const [claimed] = await store.claimDue('wkr_a', 10);
    expect(claimed!.leaseExpiresAt).toBe(fx.clock.now() + 16_000);
    fx.clock.advance(15_999);
    expect(await store.claimDue('wkr_b', 10)).toEqual([]);
    fx.clock.advance(1);
    expect((await store.claimDue('wkr_b', 10)).map((delivery) => delivery.id)).toEqual([claimed!.id]);
  });


  it('claims due deliveries once; a second owner gets none until the lease expires, then takes it over', async () => {
    fx = await makeDeliveryFixture();
    const { id } = insertSubscription(fx.db, { workspaceId: fx.workspace.workspaceId, url: URL });
    await fx.createTask();
    await fx.createTask();
    const first = createWebhookDeliveryStore(fx.db, { now: fx.clock.now });
    const second = createWebhookDeliveryStore(openDatabase(fx.path), { now: fx.clock.now });

    const claimed = await first.claimDue('wkr_a', 10);
    expect(claimed).toHaveLength(2);
    expect(claimed[0]).toMatchObject({ subscriptionId: id, url: URL, attemptCount: 0, leaseExpiresAt: fx.clock.now() + DELIVERY_LEASE_MS });
    expect(JSON.parse(claimed[0]!.payload)).toMatchObject({ id: claimed[0]!.eventId, type: 'task.created' });
    expect(await second.claimDue('wkr_b', 10)).toEqual([]);

    fx.clock.advance(DELIVERY_LEASE_MS - 1);
    expect(await second.claimDue('wkr_b', 10)).toEqual([]);
    fx.clock.advance(1);
    const takenOver = await second.claimDue('wkr_b', 1);
    expect(takenOver.map((d) => d.id)).toEqual([claimed[0]!.id]);

    // The first worker lost that claim: its attempt is not recorded over the second's.
    expect(await recordOne(first, claimed[0]!, ok(fx.clock.now()))).toBeUndefined();
    expect(attemptsOf(fx.db, claimed[0]!.id)).toEqual([]);
    expect(await recordOne(second, takenOver[0]!, ok(fx.clock.now()))).toMatchObject({ number: 1, status: 'SUCCEEDED' });
    // The other claim of the first worker, expired but not taken, is still its own to record.
    expect(await recordOne(first, claimed[1]!, ok(fx.clock.now()))).toMatchObject({ number: 1, status: 'SUCCEEDED' });
    // Recording twice for one claim writes once.
    expect(await recordOne(first, claimed[1]!, ok(fx.clock.now()))).toBeUndefined();
    expect(attemptsOf(fx.db, claimed[1]!.id)).toHaveLength(1);
  });

  it('writes a fresh token per claim: the same owner re-claiming after its lease expired invalidates the earlier claim', async () => {
    fx = await makeDeliveryFixture();
    const { id } = insertSubscription(fx.db, { workspaceId: fx.workspace.workspaceId, url: URL, eventTypes: ['task.created'] });
    await fx.createTask();
    const store = createWebhookDeliveryStore(fx.db, { now: fx.clock.now });
    const [first] = await store.claimDue('wkr_a', 1);
    expect(first!.leaseToken).toMatch(/^wkr_a\.[0-9a-f]{16}$/);
    expect(deliveriesOf(fx.db, id)[0]!.lease_owner).toBe(first!.leaseToken);
    fx.clock.advance(DELIVERY_LEASE_MS);
    const [second] = await store.claimDue('wkr_a', 1);
    expect(second!.id).toBe(first!.id);
    expect(second!.leaseToken).not.toBe(first!.leaseToken);
    expect(second!.leaseToken.startsWith('wkr_a.')).toBe(true);
    // The first claim's attempt, finishing late, is not recorded; the second's is.
    expect(await recordOne(store, first!, ok(fx.clock.now()))).toBeUndefined();
    expect(await recordOne(store, second!, ok(fx.clock.now()))).toMatchObject({ number: 1, status: 'SUCCEEDED' });
    expect(attemptsOf(fx.db, first!.id)).toHaveLength(1);
  });

  it("reads the oldest subscription's sealed secret, for the start-up check of the key", async () => {
    fx = await makeDeliveryFixture();
    const store = createWebhookDeliveryStore(fx.db, { now: fx.clock.now });
    expect(await store.oldestSealedSecret()).toBeUndefined();
    const { id, secret } = insertSubscription(fx.db, { workspaceId: fx.workspace.workspaceId, url: URL, now: fx.clock.now() });
    fx.clock.advance(1000);
    insertSubscription(fx.db, { workspaceId: fx.workspace.workspaceId, url: URL, now: fx.clock.now() });
    const oldest = await store.oldestSealedSecret();
    expect(oldest).toEqual({ subscriptionId: id, sealedSecret: expect.stringMatching(/^v2\.k0\./) });
    expect(testSecretBox.open(oldest!.sealedSecret, id)).toBe(secret);
  });

  it('claims only what is due, oldest first, at most the limit', async () => {
    fx = await makeDeliveryFixture();
    insertSubscription(fx.db, { workspaceId: fx.workspace.workspaceId, url: URL, eventTypes: ['task.created'] });
    const store = createWebhookDeliveryStore(fx.db, { now: fx.clock.now });
    const start = fx.clock.now();
    await fx.createTask('a');
    fx.clock.advance(1000);
    await fx.createTask('b');
    fx.clock.advance(1000);
    await fx.createTask('c');
    fx.clock.set(start + 1000);
    const due = await store.claimDue('wkr_a', 1);
    expect(due.map((d) => JSON.parse(d.payload).data.object.title)).toEqual(['a']);
    expect((await store.claimDue('wkr_a', 5)).map((d) => JSON.parse(d.payload).data.object.title)).toEqual(['b']);
    expect(await store.claimDue('wkr_a', 5)).toEqual([]);
  });

  it('cancels, instead of claiming, a due delivery whose subscription is DISABLED', async () => {
    fx = await makeDeliveryFixture();
    const { id } = insertSubscription(fx.db, { workspaceId: fx.workspace.workspaceId, url: URL });
    await fx.createTask();
    fx.db.prepare("UPDATE webhook_subscriptions SET status = 'DISABLED', disabled_code = 'MANUAL', disabled_message = 'off' WHERE id = ?").run(id);
    const store = createWebhookDeliveryStore(fx.db, { now: fx.clock.now });
    expect(await store.claimDue('wkr_a', 10)).toEqual([]);
    expect(deliveriesOf(fx.db, id)).toMatchObject([{ status: 'CANCELLED', next_attempt_at: null, completed_at: fx.clock.now(), attempt_count: 0 }]);
  });

  it('hands out the sealed current secret and, while the overlap lasts, the previous one, never opened', async () => {
    fx = await makeDeliveryFixture();
    const expiresAt = fx.clock.now() + 60_000;
    const { id, secret } = insertSubscription(fx.db, {
      workspaceId: fx.workspace.workspaceId,
      url: URL,
      previous: { secret: 'whsec_previousprevious', expiresAt },
    });
    await fx.createTask();
    const store = createWebhookDeliveryStore(fx.db, { now: fx.clock.now });
    const opened = (claimed: ClaimedDelivery) => claimed.sealedSecrets.map((sealed) => testSecretBox.open(sealed, claimed.subscriptionId));
    const [during] = await store.claimDue('wkr_a', 1);
    expect(during!.subscriptionId).toBe(id);
    expect(during!.sealedSecrets).toEqual([subscriptionRow(fx.db, id).sealed_secret, subscriptionRow(fx.db, id).sealed_previous_secret]);
    expect(opened(during!)).toEqual([secret, 'whsec_previousprevious']);

    fx.clock.set(expiresAt + DELIVERY_LEASE_MS);
    const [after] = await store.claimDue('wkr_a', 1);
    expect(opened(after!)).toEqual([secret]);
  });
});

describe('recording attempts', () => {
  it('writes the attempt and the outcome together; a success resets the failed-events count', async () => {
    fx = await makeDeliveryFixture();
    const { id } = insertSubscription(fx.db, { workspaceId: fx.workspace.workspaceId, url: URL, eventTypes: ['task.created'] });
    fx.db.prepare('UPDATE webhook_subscriptions SET consecutive_failed_events = 2 WHERE id = ?').run(id);
    await fx.createTask();
    const store = createWebhookDeliveryStore(fx.db, { now: fx.clock.now });
    const t0 = fx.clock.now();
    const [claimed] = await store.claimDue('wkr_a', 1);
    fx.clock.advance(250);
    expect(await recordOne(store, claimed!, failed(t0), t0 + 250 + 31_500)).toEqual({ number: 1, succeeded: false, status: 'PENDING', nextAttemptAt: t0 + 250 + 31_500 });
    expect(deliveriesOf(fx.db, id)[0]).toMatchObject({ status: 'PENDING', attempt_count: 1, next_attempt_at: t0 + 250 + 31_500, lease_owner: null, lease_expires_at: null });
    expect(attemptsOf(fx.db, claimed!.id)).toEqual([
      { delivery_id: claimed!.id, number: 1, attempted_at: t0, duration_ms: 5, status_code: 500, error_code: null, error_message: null, succeeded: 0, next_attempt_at: t0 + 250 + 31_500 },
    ]);
    expect(subscriptionRow(fx.db, id).consecutive_failed_events).toBe(2);

    fx.clock.advance(31_500);
    const [again] = await store.claimDue('wkr_a', 1);
    expect(again!.attemptCount).toBe(1);
    expect(await recordOne(store, again!, ok(fx.clock.now()))).toEqual({ number: 2, succeeded: true, status: 'SUCCEEDED', nextAttemptAt: null });
    expect(deliveriesOf(fx.db, id)[0]).toMatchObject({ status: 'SUCCEEDED', attempt_count: 2, next_attempt_at: null, completed_at: fx.clock.now() });
    expect(subscriptionRow(fx.db, id).consecutive_failed_events).toBe(0);
  });

  it('a 410 fails the delivery, disables the subscription (GONE, version + 1) and cancels its pending deliveries', async () => {
    fx = await makeDeliveryFixture();
    const { id } = insertSubscription(fx.db, { workspaceId: fx.workspace.workspaceId, url: URL, eventTypes: ['task.created'], now: fx.clock.now() });
    await fx.createTask();
    // Later, so that the first is claimed first (ties are broken by id, not by insertion).
    fx.clock.advance(1);
    await fx.createTask();
    const store = createWebhookDeliveryStore(fx.db, { now: fx.clock.now });
    const [claimed] = await store.claimDue('wkr_a', 1);
    fx.clock.advance(10);
    // A 410 ends the delivery whatever the retry schedule says.
    expect(await recordOne(store, claimed!, failed(fx.clock.now(), 410), fx.clock.now() + 30_000)).toMatchObject({ status: 'FAILED', disabled: 'GONE', nextAttemptAt: null });
    const row = subscriptionRow(fx.db, id);
    expect(row).toMatchObject({ status: 'DISABLED', disabled_code: 'GONE', disabled_at: fx.clock.now(), version: 2, updated_at: fx.clock.now() });
    expect(row.disabled_message).toContain('410');
    expect(deliveriesOf(fx.db, id).map((d) => [d.status, d.next_attempt_at])).toEqual([
      ['FAILED', null],
      ['CANCELLED', null],
    ]);
  });
});

describe('recording a batch', () => {
  /** Makes every insert of an attempt of `deliveryId` fail on this connection only (a TEMP trigger). */
  const failAttemptInsertsOf = (db: DeliveryFixture['db'], deliveryId: string) =>
    db
      .prepare(
        `CREATE TEMP TRIGGER fail_attempt BEFORE INSERT ON webhook_attempts WHEN NEW.delivery_id = '${deliveryId}' BEGIN SELECT RAISE(ABORT, 'injected failure'); END`,
      )
      .run();

  it('writes each attempt whose claim holds; one lost to a takeover and one whose statements fail leave no trace, the others commit', async () => {
    fx = await makeDeliveryFixture();
    const { id } = insertSubscription(fx.db, { workspaceId: fx.workspace.workspaceId, url: URL, eventTypes: ['task.created'] });
    // A millisecond apart: claimed in the order they were inserted (ties would be broken by id).
    for (let index = 0; index < 4; index += 1) {
      await fx.createTask();
      fx.clock.advance(1);
    }
    const first = createWebhookDeliveryStore(fx.db, { now: fx.clock.now });
    const second = createWebhookDeliveryStore(openDatabase(fx.path), { now: fx.clock.now });
    const claimed = await first.claimDue('wkr_a', 4);
    expect(claimed).toHaveLength(4);
    // The lease expires mid-batch: the second worker takes the second delivery over.
    fx.clock.advance(DELIVERY_LEASE_MS);
    const [takenOver] = await second.claimDue('wkr_b', 1);
    expect(takenOver!.id).toBe(claimed[0]!.id);
    failAttemptInsertsOf(fx.db, claimed[2]!.id);

    const at = fx.clock.now();
    const results = await first.recordAttempts([
      { claimed: claimed[0]!, outcome: ok(at), retryAt: null },
      { claimed: claimed[1]!, outcome: ok(at), retryAt: null },
      { claimed: claimed[2]!, outcome: ok(at), retryAt: null },
      { claimed: claimed[3]!, outcome: failed(at), retryAt: at + 30_000 },
    ]);
    expect(results).toEqual([
      { lost: true },
      { recorded: { number: 1, succeeded: true, status: 'SUCCEEDED', nextAttemptAt: null } },
      { error: expect.objectContaining({ message: 'injected failure' }) },
      { recorded: { number: 1, succeeded: false, status: 'PENDING', nextAttemptAt: at + 30_000 } },
    ]);
    const rows = deliveriesOf(fx.db, id);
    // The taken-over delivery is the second worker's: untouched.
    expect(rows[0]).toMatchObject({ status: 'PENDING', attempt_count: 0, lease_owner: takenOver!.leaseToken });
    expect(rows[1]).toMatchObject({ status: 'SUCCEEDED', attempt_count: 1, lease_owner: null });
    // The failed record rolled back its own savepoint only: still claimed, nothing written, attempted again after the lease.
    expect(rows[2]).toMatchObject({ status: 'PENDING', attempt_count: 0, lease_owner: claimed[2]!.leaseToken, lease_expires_at: claimed[2]!.leaseExpiresAt });
    expect(rows[3]).toMatchObject({ status: 'PENDING', attempt_count: 1, lease_owner: null, next_attempt_at: at + 30_000 });
    expect(claimed.map((delivery) => attemptsOf(fx.db, delivery.id).length)).toEqual([0, 1, 0, 1]);

    fx.db.prepare('DROP TRIGGER fail_attempt').run();
    fx.clock.advance(DELIVERY_LEASE_MS);
    const again = (await first.claimDue('wkr_a', 10)).find((delivery) => delivery.id === claimed[2]!.id);
    expect(again).toBeDefined();
    expect(await recordOne(first, again!, ok(fx.clock.now()))).toMatchObject({ number: 1, status: 'SUCCEEDED' });
  });

  it('writes nothing when the transaction cannot start: every attempt of the batch stays claimed', async () => {
    fx = await makeDeliveryFixture();
    const { id } = insertSubscription(fx.db, { workspaceId: fx.workspace.workspaceId, url: URL, eventTypes: ['task.created'] });
    await fx.createTask();
    fx.clock.advance(1);
    await fx.createTask();
    const store = createWebhookDeliveryStore(fx.db, { now: fx.clock.now });
    const claimed = await store.claimDue('wkr_a', 2);
    const other = openDatabase(fx.path);
    other.prepare('BEGIN IMMEDIATE').run();
    fx.db.pragma('busy_timeout = 0');
    await expect(store.recordAttempts(claimed.map((delivery) => ({ claimed: delivery, outcome: ok(fx.clock.now()), retryAt: null })))).rejects.toThrow(/locked/);
    other.prepare('ROLLBACK').run();
    other.close();
    expect(deliveriesOf(fx.db, id).map((row) => [row.status, row.attempt_count, row.lease_owner])).toEqual(claimed.map((delivery) => ['PENDING', 0, delivery.leaseToken]));
    expect(claimed.flatMap((delivery) => attemptsOf(fx.db, delivery.id))).toEqual([]);
  });
});

describe('purges', () => {
  it('ends expired rotation overlaps only', async () => {
    fx = await makeDeliveryFixture();
    const at = fx.clock.now();
    const expired = insertSubscription(fx.db, { workspaceId: fx.workspace.workspaceId, url: URL, previous: { secret: 'whsec_old', expiresAt: at } });
    const running = insertSubscription(fx.db, { workspaceId: fx.workspace.workspaceId, url: URL, previous: { secret: 'whsec_old', expiresAt: at + 1 } });
    const store = createWebhookDeliveryStore(fx.db, { now: fx.clock.now });
    expect(await store.endExpiredRotationOverlaps()).toBe(1);
    expect(subscriptionRow(fx.db, expired.id)).toMatchObject({ sealed_previous_secret: null, previous_secret_expires_at: null, version: 1 });
    expect(subscriptionRow(fx.db, running.id).previous_secret_expires_at).toBe(at + 1);
  });

  it('deletes deliveries ended more than 30 days ago, and events older than that with nothing pending or recently ended', async () => {
    fx = await makeDeliveryFixture();
    const { id } = insertSubscription(fx.db, { workspaceId: fx.workspace.workspaceId, url: URL, eventTypes: ['task.created'] });
    const store = createWebhookDeliveryStore(fx.db, { now: fx.clock.now });
    const t0 = fx.clock.now();
    await fx.createTask('delivered long ago');
    fx.clock.advance(1);
    await fx.createTask('still pending');
    const [delivered] = await store.claimDue('wkr_a', 1);
    await recordOne(store, delivered!, ok(t0));
    fx.clock.advance(5 * 24 * 3600_000);
    await fx.createTask('recent');

    fx.clock.advance(WEBHOOK_LOG_RETENTION_MS);
    const before = fx.clock.now() - WEBHOOK_LOG_RETENTION_MS;
    expect(await store.purgeEndedDeliveries(before)).toBe(1);
    expect(attemptsOf(fx.db, delivered!.id)).toEqual([]);
    // The project.created event and the delivered task's event go; the pending one stays; the recent one is young.
    expect(await store.purgeEvents(before)).toBe(2);
    const titles = (fx.db.prepare('SELECT payload FROM events ORDER BY rowid').all() as { payload: string }[]).map((row) => JSON.parse(row.payload).data.object.title);
    expect(titles).toEqual(['still pending', 'recent']);
    expect(deliveriesOf(fx.db, id)).toHaveLength(2);
    expect(await store.purgeEndedDeliveries(before)).toBe(0);
    expect(await store.purgeEvents(before)).toBe(0);
  });
});
