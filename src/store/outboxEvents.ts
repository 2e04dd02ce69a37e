// The outbox: every change to a task or project inserts, in the same transaction, one `events`
// row holding the whole webhook envelope, and one PENDING `webhook_deliveries` row per ACTIVE
// subscription of the workspace that lists the event's type. The webhook worker delivers them.
import { AsyncResource } from 'node:async_hooks';
import { eventTypes, type EventType } from '../../generated/work-platform/rules.js';
import type { components } from '../../generated/work-platform/types.js';
import { and, asc, eq, sql } from 'drizzle-orm';
import { events, webhookDeliveries, webhookSubscriptions } from '../../db/schema.js';
import { engineOf, type StoreEngine, type StoreSource } from './engine.js';
import { newId, type RandomBytes } from './ids.js';

/** The webhook delivery body, exactly as stored in `events.payload`. */
export type WebhookEnvelope = components['schemas']['WebhookEnvelope'];

/** Version of the envelope shape, sent as `apiVersion` in every delivery (the contract's constant). */
export const webhookApiVersion: WebhookEnvelope['apiVersion'] = '2026-11-23';

/** The event types the contract's `webhooks` section declares. */
export const outboxEventTypes = eventTypes;
export type OutboxEventType = EventType;

/** Who caused a change: the session's user, or the user a personal access token belongs to. */
export type EventActor = WebhookEnvelope['actor'];

/** Keyed by engine: a SQLite connection and its engine are one key (engineOf). */
const deliveryListeners = new WeakMap<StoreEngine, Set<() => void>>();
/** The async context this module was loaded in, where no write transaction is open. */
const outsideAnyTransaction = new AsyncResource('webhook-deliveries-queued');

/** The channel a PostgreSQL commit that queued deliveries is announced on (NOTIFY), for workers in any process. */
const deliveriesQueuedChannel = 'webhook_deliveries_queued';

/**
 * Calls `listener` whenever a commit of any process queued deliveries: on PostgreSQL by LISTEN on
 * the channel every such commit NOTIFYs (and once after a lost listening connection is back). On
 * SQLite never: a worker there polls PRAGMA data_version. Resolves to the function that stops it.
 */
export function onDeliveriesQueuedAnywhere(source: StoreSource, listener: () => void): Promise<() => Promise<void>> {
  return engineOf(source).listen(deliveriesQueuedChannel, listener);
}

/**
 * Calls `listener` soon after deliveries were queued on this connection (the in-process worker's
 * wake-up, so that it need not wait for the next retry sweep). Returns the function that unsubscribes.
 */
export function onDeliveriesQueued(source: StoreSource, listener: () => void): () => void {
  const engine = engineOf(source);
  let listeners = deliveryListeners.get(engine);
  if (!listeners) deliveryListeners.set(engine, (listeners = new Set()));
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * Tells the listeners of this connection that PENDING deliveries were inserted. Called inside the
 * writing transaction; the listeners run outside its async context (a store call they make must
 * not join that ended transaction). On PostgreSQL they run once it has committed: the worker
 * claims on another connection of the pool, where uncommitted rows are not seen. On SQLite they run
 * at once: the worker's claim is a write of this connection, queued behind the open transaction
 * (it reads the committed rows, or none after a rollback) and ahead of the writes of requests that
 * arrive later, so the in-process worker takes its own process's deliveries first.
 */
export function notifyDeliveriesQueued(source: StoreSource): void {
  const engine = engineOf(source);
  engine.announceCommit(deliveriesQueuedChannel);
  const listeners = deliveryListeners.get(engine);
  if (!listeners || listeners.size === 0) return;
  const notify = () =>
    outsideAnyTransaction.runInAsyncScope(() => {
      for (const listener of listeners) listener();
    });
  if (engine.kind === 'postgres') engine.afterCommit(notify);
  else setImmediate(notify);
}

export interface QueuedDelivery {
  subscriptionId: string;
  workspaceId: string;
  eventId: string;
  eventType: OutboxEventType;
  /** True when queued by a replay rather than by the event's own commit. */
  replay: boolean;
  /** When the first attempt is due; also the delivery's createdAt. */
  dueAt: number;
}

/** The webhook envelope of a change, as the outbox stores and the worker sends it. */
function envelopeOf(randomBytes: RandomBytes, workspaceId: string, type: OutboxEventType, actor: EventActor, occurredAt: number, object: WebhookEnvelope['data']['object']): WebhookEnvelope {
  return {
    id: newId('evt', randomBytes),
    type,
    apiVersion: webhookApiVersion,
    createdAt: new Date(occurredAt).toISOString(),
    tenantId: workspaceId,
    actor: { id: actor.id, kind: actor.kind },
    data: { object },
  };
}

/**
 * Inserts PENDING deliveries (the fan-out of a new event, and replays), inside the caller's write
 * transaction; `queue()` answers the new delivery id.
 */
export function createEngineDeliveryQueue(engine: StoreEngine, randomBytes: RandomBytes) {
  const prepareInsert = (replay: boolean) =>
    engine.statement(
      engine.orm.insert(webhookDeliveries).values({
        id: sql.placeholder('id'),
        subscriptionId: sql.placeholder('subscriptionId'),
        workspaceId: sql.placeholder('workspaceId'),
        eventId: sql.placeholder('eventId'),
        eventType: sql.placeholder('eventType'),
        replay,
        status: 'PENDING',
        attemptCount: 0,
        nextAttemptAt: sql.placeholder('dueAt'),
        createdAt: sql.placeholder('dueAt'),
      }),
    );
  const insertFresh = prepareInsert(false);
  const insertReplay = prepareInsert(true);
  return {
    async queue({ replay, ...delivery }: QueuedDelivery): Promise<string> {
      const id = newId('dlv', randomBytes);
      await (replay ? insertReplay : insertFresh).run({ id, ...delivery });
      return id;
    },
  };
}

/**
 * The outbox on an engine: `record()` must run inside the caller's write transaction, so the event
 * and its deliveries exist exactly when the change does.
 */
export function createOutboxRecorder(engine: StoreEngine, randomBytes: RandomBytes) {
  const subscribedTo = engine.statement<unknown, { workspaceId: string; type: string }, [id: string]>(
    engine.orm
      .select({ id: webhookSubscriptions.id })
      .from(webhookSubscriptions)
      .where(
        and(
          eq(webhookSubscriptions.workspaceId, sql.placeholder('workspaceId')),
          eq(webhookSubscriptions.status, 'ACTIVE'),
          engine.dialect.jsonArrayHas(webhookSubscriptions.eventTypes, sql.placeholder('type')),
        ),
      )
      .orderBy(asc(webhookSubscriptions.createdAt), asc(webhookSubscriptions.id)),
  );
  const deliveries = createEngineDeliveryQueue(engine, randomBytes);
  const insert = engine.statement(
    engine.orm.insert(events).values({
      id: sql.placeholder('id'),
      workspaceId: sql.placeholder('workspaceId'),
      type: sql.placeholder('type'),
      occurredAt: sql.placeholder('occurredAt'),
      payload: sql.placeholder('payload'),
    }),
  );
  return {
    async record(workspaceId: string, type: OutboxEventType, actor: EventActor, occurredAt: number, object: WebhookEnvelope['data']['object']): Promise<WebhookEnvelope> {
      const envelope = envelopeOf(randomBytes, workspaceId, type, actor, occurredAt, object);
      await insert.run({ id: envelope.id, workspaceId, type, occurredAt, payload: JSON.stringify(envelope) });
      const subscriptions = await subscribedTo.rows({ workspaceId, type });
      for (const [subscriptionId] of subscriptions) {
        await deliveries.queue({ subscriptionId, workspaceId, eventId: envelope.id, eventType: type, replay: false, dueAt: occurredAt });
      }
      if (subscriptions.length > 0) notifyDeliveriesQueued(engine);
      return envelope;
    },
  };
}

export type OutboxRecorder = ReturnType<typeof createOutboxRecorder>;
