import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultRandomBytes } from '../../src/store/ids.js';
import { createOutboxRecorder, outboxEventTypes } from '../../src/store/outboxEvents.js';
import { sqliteEngine } from '../../src/store/engine.js';
import type { Task } from '../../src/store/tasks.js';
import { manualDisableMessage, maximumReplayEvents, maximumWebhooksPerWorkspace } from '../../src/store/webhookSubscriptions.js';
import {
  InvalidValueError,
  NotFoundError,
  ValueRefusedError,
  VersionConflictError,
  WebhookDisabledError,
  WebhookLimitError,
} from '../../src/store/workPlatformErrors.js';
import { createSecretBox } from '../../src/auth/secretBox.js';
import { createWebhookSubscriptions, signingKeyOverlapMs, type WebhookSubscriptions } from '../../src/webhooks/subscriptions.js';
import { createHostResolver } from '../../src/webhooks/hostResolver.js';
import { fakeDnsResolver } from '../support/fakeDns.js';
import { makeClock, makeDatabase, type TempDatabase } from '../store/factories.js';
import { makeWorkspace, type WorkspaceFixture } from '../store/workPlatformFactories.js';

let t: TempDatabase;
let clock: ReturnType<typeof makeClock>;
let workspace: WorkspaceFixture;
let other: WorkspaceFixture;
let store: WebhookSubscriptions;
const box = createSecretBox(new Uint8Array(32).fill(3));
const start = Date.UTC(2026, 10, 23, 9, 41, 0);
beforeEach(async () => {
  t = makeDatabase();
  clock = makeClock(start);
  workspace = await makeWorkspace(t.db);
  other = await makeWorkspace(t.db, { name: 'Other' });
  store = createWebhookSubscriptions(t.db, { secretBox: box, now: clock.now, resolver: createHostResolver({ resolver: fakeDnsResolver(), now: clock.now }) });
});
afterEach(() => t.cleanup());

const url = 'https://hooks.example.com/work-platform';
const create = (input: Partial<Parameters<WebhookSubscriptions['createWebhook']>[1]> = {}, workspaceId = workspace.workspaceId) =>
  store.createWebhook(workspaceId, { url, eventTypes: ['task.created'], ...input });
const row = (id: string) => t.db.prepare('SELECT * FROM webhook_subscriptions WHERE id = ?').get(id) as Record<string, any>;
const deliveries = (subscriptionId: string) =>
  t.db.prepare('SELECT * FROM webhook_deliveries WHERE subscription_id = ? ORDER BY rowid').all(subscriptionId) as Record<string, any>[];

/** Inserts an event of the workspace directly (no fan-out), at the given time. */
function insertEvent(workspaceId: string, type: string, occurredAt: number, id = `evt_${Math.random().toString(36).slice(2)}x${occurredAt}`): string {
  t.db.prepare('INSERT INTO events (id, workspace_id, type, occurred_at, payload) VALUES (?, ?, ?, ?, ?)').run(id, workspaceId, type, occurredAt, '{}');
  return id;
}

function insertPendingDelivery(subscriptionId: string, eventId: string, extra: Record<string, unknown> = {}): string {
  const id = `dlv_pending${Math.random().toString(36).slice(2)}`;
  const values = {
    id,
    subscription_id: subscriptionId,
    workspace_id: workspace.workspaceId,
    event_id: eventId,
    event_type: 'task.created',
    replay: 0,
    status: 'PENDING',
    next_attempt_at: clock.now(),
    created_at: clock.now(),
    ...extra,
  };
  const columns = Object.keys(values);
  t.db.prepare(`INSERT INTO webhook_deliveries (${columns.join(', ')}) VALUES (${columns.map((c) => `@${c}`).join(', ')})`).run(values);
  return id;
}

describe('webhook subscriptions: create and read', () => {
  it('creates an ACTIVE subscription at version 1 and returns its secret once; only the sealed secret is stored', async () => {
    const { webhook, secret } = await create({ eventTypes: ['task.created', 'project.deleted'], description: 'Billing sync' });
    expect(webhook).toEqual({
      id: expect.stringMatching(/^whk_[A-Za-z0-9]{20}$/),
      url,
      description: 'Billing sync',
      eventTypes: ['task.created', 'project.deleted'],
      status: 'ACTIVE',
      disabledReason: null,
      consecutiveFailedEvents: 0,
      signingKeyVersion: 1,
      previousSigningKeyExpiresAt: null,
      version: 1,
      createdAt: '2026-11-23T09:41:00.000Z',
      updatedAt: '2026-11-23T09:41:00.000Z',
      // Made without a user (an operator's tool): nobody to name.
      createdBy: null,
      creatorRemoved: false,
    });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(await store.getWebhook(workspace.workspaceId, webhook.id)).toEqual(webhook);
    const stored = row(webhook.id);
    expect(JSON.stringify(stored)).not.toContain(secret.slice('whsec_'.length));
    expect(box.open(stored.sealed_secret, webhook.id)).toBe(secret);
    expect(() => box.open(stored.sealed_secret, 'whk_another')).toThrow();
    expect(stored).toMatchObject({ sealed_previous_secret: null, previous_secret_expires_at: null });
  });

  it('records no event: subscriptions are not in the event catalogue', async () => {
    await create();
    expect(t.db.prepare('SELECT count(*) FROM events').pluck().get()).toBe(0);
  });

  it("answers another workspace's subscription as not found", async () => {
    const { webhook } = await create();
    expect(await store.getWebhook(other.workspaceId, webhook.id)).toBeUndefined();
    await expect(store.updateWebhook(other.workspaceId, webhook.id, { description: 'x' }, 1)).rejects.toThrow(NotFoundError);
    await expect(store.deleteWebhook(other.workspaceId, webhook.id, null)).rejects.toThrow(NotFoundError);
    await expect(store.rotateWebhookKey(other.workspaceId, webhook.id)).rejects.toThrow(NotFoundError);
    await expect(store.listWebhookDeliveries(other.workspaceId, webhook.id, { limit: 10 })).rejects.toThrow(NotFoundError);
    const missing = await (async () => {
      try {
        await store.replayWebhookEvents(other.workspaceId, webhook.id, { eventId: 'evt_x' });
      } catch (error) {
        return error as NotFoundError;
      }
    })();
    expect(missing).toMatchObject({ code: 'webhook-not-found' });
  });

  it('stores the URL as the WHATWG parser normalizes it, and refuses one that would not read back as a URI', async () => {
    expect((await create({ url: 'https://Hooks.EXAMPLE.com' })).webhook.url).toBe('https://hooks.example.com/');
    expect((await create({ url: 'https://hooks.example.com/a b' })).webhook.url).toBe('https://hooks.example.com/a%20b');
    await expect(create({ url: 'https://hooks.example.com/a|b' })).rejects.toThrow(ValueRefusedError);
  });

  it.each([
    ['http://hooks.example.com/x', 'https'],
    ['https://user:pass@hooks.example.com/x', 'user name or password'],
    ['https://10.0.0.8/x', 'not a public address'],
    ['https://169.254.169.254/latest/meta-data', 'not a public address'],
    ['https://[::1]/x', 'not a public address'],
    ['https://[::ffff:127.0.0.1]/x', 'not a public address'],
    ['https://localhost/x', 'names this machine'],
    ['https://hooks.example.com/x#frag', 'fragment'],
    ['not a url', 'not an absolute URL'],
  ])('refuses %s at /url (invalid_format), naming the reason', async (refused, reason) => {
    try {
      await create({ url: refused });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ValueRefusedError);
      const [value] = (error as ValueRefusedError).refused;
      expect(value).toMatchObject({ path: '/url', code: 'invalid_format' });
      expect(value!.message).toContain(reason);
    }
    expect(t.db.prepare('SELECT count(*) FROM webhook_subscriptions').pluck().get()).toBe(0);
  });

  it('admits loopback targets only when allowed', async () => {
    const loose = createWebhookSubscriptions(t.db, { secretBox: box, now: clock.now, allowLoopback: true, resolver: createHostResolver({ resolver: fakeDnsResolver(), now: clock.now }) });
    for (const target of ['http://127.0.0.1:8080/hook', 'http://[::1]:8080/hook', 'http://localhost:8080/hook']) {
      expect((await loose.createWebhook(workspace.workspaceId, { url: target, eventTypes: ['task.created'] })).webhook.url).toBe(target);
      await expect(create({ url: target })).rejects.toThrow(ValueRefusedError);
    }
    await expect(loose.createWebhook(workspace.workspaceId, { url: 'http://10.0.0.1/', eventTypes: ['task.created'] })).rejects.toThrow(ValueRefusedError);
  });

  it('refuses event types outside the catalogue, repeated ones and none', async () => {
    await expect(create({ eventTypes: ['task.exploded'] })).rejects.toThrow(InvalidValueError);
    await expect(create({ eventTypes: ['task.created', 'task.created'] })).rejects.toThrow(InvalidValueError);
    await expect(create({ eventTypes: [] })).rejects.toThrow(InvalidValueError);
  });

  it(`allows ${maximumWebhooksPerWorkspace} subscriptions per workspace, counted per workspace`, async () => {
    for (let index = 0; index < maximumWebhooksPerWorkspace; index += 1) await create();
    await expect(create()).rejects.toThrow(WebhookLimitError);
    expect((await create({}, other.workspaceId)).webhook.status).toBe('ACTIVE');
    const first = (await store.listWebhooks(workspace.workspaceId, { limit: 1 })).items[0]!;
    await store.deleteWebhook(workspace.workspaceId, first.id, null);
    expect((await create()).webhook.status).toBe('ACTIVE');
  });

  it('lists newest first (created_at, then id, descending) in keyset pages', async () => {
    const ids: string[] = [];
    for (let index = 0; index < 7; index += 1) {
      if (index % 3 !== 2) clock.advance(1000); // some ties on createdAt
      ids.push((await create()).webhook.id);
    }
    await create({}, other.workspaceId);
    const seen: string[] = [];
    let after = null;
    for (;;) {
      const page = await store.listWebhooks(workspace.workspaceId, { limit: 3, after });
      seen.push(...page.items.map((item) => item.id));
      if (!page.nextAfter) break;
      after = page.nextAfter;
    }
    const expected = ids
      .map((id) => ({ id, createdAt: row(id).created_at as number }))
      .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1))
      .map((item) => item.id);
    expect(seen).toEqual(expected);
  });
});

describe('webhook subscriptions: update and delete', () => {
  it('applies a change at the expected version, +1 per change; a patch that changes nothing writes nothing', async () => {
    const { webhook } = await create();
    clock.advance(1000);
    const updated = await store.updateWebhook(workspace.workspaceId, webhook.id, { description: 'New', eventTypes: ['task.deleted', 'task.created'] }, 1);
    expect(updated).toMatchObject({ description: 'New', eventTypes: ['task.deleted', 'task.created'], version: 2, updatedAt: '2026-11-23T09:41:01.000Z' });
    clock.advance(1000);
    const same = await store.updateWebhook(workspace.workspaceId, webhook.id, { description: 'New', eventTypes: ['task.created', 'task.deleted'], status: 'ACTIVE', url }, 2);
    expect(same).toEqual(updated);
    expect(row(webhook.id).version).toBe(2);
    await expect(store.updateWebhook(workspace.workspaceId, webhook.id, { description: 'Lost' }, 1)).rejects.toThrow(VersionConflictError);
  });

  it('re-checks a new URL', async () => {
    const { webhook } = await create();
    await expect(store.updateWebhook(workspace.workspaceId, webhook.id, { url: 'https://192.168.1.1/' }, 1)).rejects.toThrow(ValueRefusedError);
    expect(await store.updateWebhook(workspace.workspaceId, webhook.id, { url: 'https://other.example.com/h' }, 1)).toMatchObject({ url: 'https://other.example.com/h', version: 2 });
  });

  it('DISABLED records reason MANUAL and cancels the pending deliveries in the same transaction, leaving ended ones', async () => {
    const { webhook } = await create();
    const eventId = insertEvent(workspace.workspaceId, 'task.created', start - 1000);
    const pending = insertPendingDelivery(webhook.id, eventId, { lease_owner: 'worker-1', lease_expires_at: clock.now() + 60_000 });
    const succeeded = insertPendingDelivery(webhook.id, eventId, { status: 'SUCCEEDED', next_attempt_at: null, completed_at: start - 10 });
    clock.advance(5000);
    const disabled = await store.updateWebhook(workspace.workspaceId, webhook.id, { status: 'DISABLED' }, 1);
    expect(disabled).toMatchObject({
      status: 'DISABLED',
      disabledReason: { code: 'MANUAL', message: manualDisableMessage, disabledAt: '2026-11-23T09:41:05.000Z' },
      version: 2,
    });
    const byId = Object.fromEntries(deliveries(webhook.id).map((delivery) => [delivery.id, delivery]));
    expect(byId[pending]).toMatchObject({ status: 'CANCELLED', next_attempt_at: null, completed_at: clock.now(), lease_owner: null, lease_expires_at: null });
    expect(byId[succeeded]).toMatchObject({ status: 'SUCCEEDED', completed_at: start - 10 });
    // Already disabled: nothing changes, whatever the reason.
    expect(await store.updateWebhook(workspace.workspaceId, webhook.id, { status: 'DISABLED' }, 2)).toEqual(disabled);
  });

  it('ACTIVE re-enables: clears the reason and the failure count', async () => {
    const { webhook } = await create();
    t.db
      .prepare("UPDATE webhook_subscriptions SET status = 'DISABLED', disabled_code = 'FAILING', disabled_message = 'Failing', disabled_at = ?, consecutive_failed_events = 3 WHERE id = ?")
      .run(start, webhook.id);
    expect(await store.getWebhook(workspace.workspaceId, webhook.id)).toMatchObject({
      status: 'DISABLED',
      disabledReason: { code: 'FAILING', message: 'Failing', disabledAt: '2026-11-23T09:41:00.000Z' },
      consecutiveFailedEvents: 3,
    });
    const enabled = await store.updateWebhook(workspace.workspaceId, webhook.id, { status: 'ACTIVE' }, 1);
    expect(enabled).toMatchObject({ status: 'ACTIVE', disabledReason: null, consecutiveFailedEvents: 0, version: 2 });
    expect(row(webhook.id)).toMatchObject({ disabled_code: null, disabled_message: null, disabled_at: null });
  });

  it('deletes the subscription with its deliveries and attempts; checks the version when given', async () => {
    const { webhook } = await create();
    const eventId = insertEvent(workspace.workspaceId, 'task.created', start);
    const delivery = insertPendingDelivery(webhook.id, eventId);
    t.db.prepare('INSERT INTO webhook_attempts (delivery_id, number, attempted_at, duration_ms, status_code, succeeded) VALUES (?, 1, ?, 12, 500, 0)').run(delivery, start);
    await expect(store.deleteWebhook(workspace.workspaceId, webhook.id, 2)).rejects.toThrow(VersionConflictError);
    await store.deleteWebhook(workspace.workspaceId, webhook.id, 1);
    expect(await store.getWebhook(workspace.workspaceId, webhook.id)).toBeUndefined();
    expect(t.db.prepare('SELECT (SELECT count(*) FROM webhook_deliveries) + (SELECT count(*) FROM webhook_attempts)').pluck().get()).toBe(0);
    expect(t.db.prepare('SELECT count(*) FROM events').pluck().get()).toBe(1);
    await expect(store.deleteWebhook(workspace.workspaceId, webhook.id, null)).rejects.toThrow(NotFoundError);
  });
});

describe('webhook subscriptions: key rotation', () => {
  it('makes a new current secret, keeps the replaced one until now + 58 h 45 min, and drops an older one when rotated again', async () => {
    const { webhook, secret: original } = await create();
    clock.advance(60_000);
    const first = await store.rotateWebhookKey(workspace.workspaceId, webhook.id);
    expect(signingKeyOverlapMs).toBe(211_500_000);
    expect(first).toEqual({
      id: webhook.id,
      signingKeyVersion: 2,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
      previousSigningKeyExpiresAt: new Date(start + 60_000 + 211_500_000).toISOString(),
    });
    expect(first.secret).not.toBe(original);
    let stored = row(webhook.id);
    expect(box.open(stored.sealed_secret, webhook.id)).toBe(first.secret);
    expect(box.open(stored.sealed_previous_secret, webhook.id)).toBe(original);
    expect(await store.getWebhook(workspace.workspaceId, webhook.id)).toMatchObject({
      signingKeyVersion: 2,
      previousSigningKeyExpiresAt: first.previousSigningKeyExpiresAt,
      version: 2,
      updatedAt: new Date(start + 60_000).toISOString(),
    });

    clock.advance(3_600_000);
    const second = await store.rotateWebhookKey(workspace.workspaceId, webhook.id);
    expect(second).toMatchObject({ signingKeyVersion: 3, previousSigningKeyExpiresAt: new Date(clock.now() + 211_500_000).toISOString() });
    stored = row(webhook.id);
    expect(box.open(stored.sealed_secret, webhook.id)).toBe(second.secret);
    expect(box.open(stored.sealed_previous_secret, webhook.id)).toBe(first.secret);
    expect(JSON.stringify(stored)).not.toContain(original.slice(6));

    clock.set(clock.now() + 211_500_000 - 1);
    expect((await store.getWebhook(workspace.workspaceId, webhook.id))?.previousSigningKeyExpiresAt).toBe(second.previousSigningKeyExpiresAt);
    clock.advance(1);
    expect((await store.getWebhook(workspace.workspaceId, webhook.id))?.previousSigningKeyExpiresAt).toBeNull();
    expect((await store.listWebhooks(workspace.workspaceId, { limit: 10 })).items[0]?.previousSigningKeyExpiresAt).toBeNull();
  });
});

describe('webhook subscriptions: replays', () => {
  it('queues one event of the workspace whatever its type, with a new delivery id, PENDING now', async () => {
    const { webhook } = await create({ eventTypes: ['task.created'] });
    const eventId = insertEvent(workspace.workspaceId, 'project.deleted', start - 5000);
    clock.advance(1000);
    const replay = await store.replayWebhookEvents(workspace.workspaceId, webhook.id, { eventId });
    expect(replay).toEqual({ subscriptionId: webhook.id, eventCount: 1, deliveries: [{ id: expect.stringMatching(/^dlv_[A-Za-z0-9]{20}$/), eventId, eventType: 'project.deleted' }] });
    expect(deliveries(webhook.id)).toEqual([
      expect.objectContaining({
        id: replay.deliveries[0]!.id,
        workspace_id: workspace.workspaceId,
        event_id: eventId,
        replay: 1,
        status: 'PENDING',
        attempt_count: 0,
        next_attempt_at: clock.now(),
        created_at: clock.now(),
        completed_at: null,
      }),
    ]);
    const again = await store.replayWebhookEvents(workspace.workspaceId, webhook.id, { eventId });
    expect(again.deliveries[0]!.id).not.toBe(replay.deliveries[0]!.id);
  });

  it("answers event-not-found for an unknown event or another workspace's", async () => {
    const { webhook } = await create();
    const foreign = insertEvent(other.workspaceId, 'task.created', start);
    for (const eventId of [foreign, 'evt_neverIssued']) {
      await expect(store.replayWebhookEvents(workspace.workspaceId, webhook.id, { eventId })).rejects.toThrow(expect.objectContaining({ code: 'event-not-found' }));
    }
    expect(deliveries(webhook.id)).toEqual([]);
  });

  it('queues a range: from inclusive, to exclusive, only the listed types of this workspace, oldest first (the id breaks ties)', async () => {
    const { webhook } = await create({ eventTypes: ['task.created', 'task.completed'] });
    const before = insertEvent(workspace.workspaceId, 'task.created', start - 1);
    const atFrom = insertEvent(workspace.workspaceId, 'task.completed', start, 'evt_zzzFirstAtFrom');
    const tieSecond = insertEvent(workspace.workspaceId, 'task.created', start, 'evt_aaaSecondAtFrom');
    const notListed = insertEvent(workspace.workspaceId, 'project.created', start + 10);
    const foreign = insertEvent(other.workspaceId, 'task.created', start + 20);
    const later = insertEvent(workspace.workspaceId, 'task.created', start + 30);
    const earlierButInsertedLast = insertEvent(workspace.workspaceId, 'task.created', start + 5);
    const atTo = insertEvent(workspace.workspaceId, 'task.created', start + 100);
    const replay = await store.replayWebhookEvents(workspace.workspaceId, webhook.id, {
      from: new Date(start).toISOString(),
      to: new Date(start + 100).toISOString(),
    });
    expect(replay.deliveries.map((delivery) => delivery.eventId)).toEqual([tieSecond, atFrom, earlierButInsertedLast, later]);
    expect(replay.eventCount).toBe(4);
    for (const excluded of [before, notListed, foreign, atTo]) expect(replay.deliveries.map((delivery) => delivery.eventId)).not.toContain(excluded);
    expect(deliveries(webhook.id).every((delivery) => delivery.replay === 1 && delivery.status === 'PENDING')).toBe(true);
    expect(await store.replayWebhookEvents(workspace.workspaceId, webhook.id, { from: '2020-01-01T00:00:00Z', to: '2020-01-02T00:00:00Z' })).toEqual({
      subscriptionId: webhook.id,
      eventCount: 0,
      deliveries: [],
    });
  });

  it(`refuses a range ending at or before its start, and one of more than ${maximumReplayEvents} events, queueing nothing`, async () => {
    const { webhook } = await create();
    const at = new Date(start).toISOString();
    await expect(store.replayWebhookEvents(workspace.workspaceId, webhook.id, { from: at, to: at })).rejects.toThrow(
      expect.objectContaining({ refused: [{ path: '/to', code: 'too_small', message: expect.any(String) }] }),
    );
    const insert = t.db.transaction(() => {
      for (let index = 0; index <= maximumReplayEvents; index += 1) insertEvent(workspace.workspaceId, 'task.created', start + index, `evt_bulk${index}`);
    });
    insert();
    const range = { from: new Date(start).toISOString(), to: new Date(start + maximumReplayEvents + 1).toISOString() };
    await expect(store.replayWebhookEvents(workspace.workspaceId, webhook.id, range)).rejects.toThrow(
      expect.objectContaining({ refused: [{ path: '/to', code: 'too_big', message: expect.stringContaining('1000') }] }),
    );
    expect(deliveries(webhook.id)).toEqual([]);
    const exactly = await store.replayWebhookEvents(workspace.workspaceId, webhook.id, { ...range, to: new Date(start + maximumReplayEvents).toISOString() });
    expect(exactly.eventCount).toBe(maximumReplayEvents);
  });

  it('refuses a disabled subscription with webhook-disabled', async () => {
    const { webhook } = await create();
    const eventId = insertEvent(workspace.workspaceId, 'task.created', start);
    await store.updateWebhook(workspace.workspaceId, webhook.id, { status: 'DISABLED' }, 1);
    await expect(store.replayWebhookEvents(workspace.workspaceId, webhook.id, { eventId })).rejects.toThrow(WebhookDisabledError);
    await store.updateWebhook(workspace.workspaceId, webhook.id, { status: 'ACTIVE' }, 2);
    expect((await store.replayWebhookEvents(workspace.workspaceId, webhook.id, { eventId })).eventCount).toBe(1);
  });
});

describe('webhook subscriptions: delivery log', () => {
  it('lists the deliveries newest first with their attempts in order, filtered by status and event, in keyset pages', async () => {
    const { webhook } = await create({ eventTypes: [...outboxEventTypes] });
    const { webhook: otherSubscription } = await create();
    const engine = sqliteEngine(t.db);
    const outbox = createOutboxRecorder(engine, defaultRandomBytes);
    const eventIds: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      clock.advance(1000);
      eventIds.push((await engine.write(() => outbox.record(workspace.workspaceId, 'task.created', workspace.actor, clock.now(), { id: `tsk_${index}` } as Task))).id);
    }
    // The outbox fans out to both subscriptions: 5 deliveries each.
    const mine = deliveries(webhook.id);
    expect(mine).toHaveLength(5);
    const [first, second] = mine;
    const attempt = t.db.prepare(
      'INSERT INTO webhook_attempts (delivery_id, number, attempted_at, duration_ms, status_code, error_code, error_message, succeeded, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    attempt.run(first!.id, 2, start + 40_000, 10_000, null, 'timeout', 'no answer within 10 s', 0, null);
    attempt.run(first!.id, 1, start + 10_000, 35, 503, null, null, 0, start + 40_000);
    attempt.run(second!.id, 1, start + 10_000, 20, 200, null, null, 1, null);
    t.db.prepare("UPDATE webhook_deliveries SET status = 'SUCCEEDED', next_attempt_at = NULL, completed_at = ? WHERE id = ?").run(start + 10_020, second!.id);
    clock.advance(1000);
    const replayed = (await store.replayWebhookEvents(workspace.workspaceId, webhook.id, { eventId: eventIds[0]! })).deliveries[0]!;

    const all = await store.listWebhookDeliveries(workspace.workspaceId, webhook.id, { limit: 100 });
    expect(all.items.map((item) => item.id)).toEqual([replayed.id, ...[...mine].reverse().map((delivery) => delivery.id)]);
    expect(all.items[0]).toMatchObject({ replay: true, eventId: eventIds[0], status: 'PENDING', completedAt: null });
    const firstItem = all.items.find((item) => item.id === first!.id)!;
    expect(firstItem).toMatchObject({ subscriptionId: webhook.id, eventType: 'task.created', replay: false });
    expect(firstItem.attempts).toEqual([
      { number: 1, attemptedAt: new Date(start + 10_000).toISOString(), durationMs: 35, statusCode: 503, error: null, succeeded: false, nextAttemptAt: new Date(start + 40_000).toISOString() },
      { number: 2, attemptedAt: new Date(start + 40_000).toISOString(), durationMs: 10_000, statusCode: null, error: { code: 'timeout', message: 'no answer within 10 s' }, succeeded: false, nextAttemptAt: null },
    ]);
    expect(all.items.find((item) => item.id === second!.id)).toMatchObject({ status: 'SUCCEEDED', nextAttemptAt: null, completedAt: new Date(start + 10_020).toISOString() });

    const walked: string[] = [];
    let after = null;
    for (;;) {
      const page = await store.listWebhookDeliveries(workspace.workspaceId, webhook.id, { limit: 2, after });
      walked.push(...page.items.map((item) => item.id));
      if (!page.nextAfter) break;
      after = page.nextAfter;
    }
    expect(walked).toEqual(all.items.map((item) => item.id));

    expect((await store.listWebhookDeliveries(workspace.workspaceId, webhook.id, { limit: 100, status: 'SUCCEEDED' })).items.map((item) => item.id)).toEqual([second!.id]);
    expect((await store.listWebhookDeliveries(workspace.workspaceId, webhook.id, { limit: 100, eventId: eventIds[0] })).items.map((item) => item.id)).toEqual([
      replayed.id,
      first!.id,
    ]);
    expect((await store.listWebhookDeliveries(workspace.workspaceId, webhook.id, { limit: 100, eventId: eventIds[0], status: 'PENDING' })).items).toHaveLength(2);
    expect((await store.listWebhookDeliveries(workspace.workspaceId, otherSubscription.id, { limit: 100 })).items).toHaveLength(5);
  });
});
