// Webhook subscriptions of the Work-Platform API, their sealed signing secrets, replays and
// delivery log. Every read and write is scoped by workspace (another workspace's subscription is
// "not found"), every change bumps `version` by one and runs in one transaction. This module
// stores what it is given: URLs already accepted by the target guard and secrets already sealed
// (src/webhooks/subscriptions.ts does both); it never sees a secret in plaintext.
import { maxLengths } from '../../generated/work-platform/rules.js';
import type { components } from '../../generated/work-platform/types.js';
import { and, asc, count, eq, getTableColumns, gte, lt, sql } from 'drizzle-orm';
import {
  events,
  webhookAttempts,
  webhookDeliveries,
  webhookSubscriptions,
  type WebhookDeliveryStatus,
  type WebhookSubscriptionStatus,
} from '../../db/schema.js';
import { engineOf, type StoreSource } from './engine.js';
import { defaultRandomBytes, type RandomBytes } from './ids.js';
import { keysetCondition, keysetOrderBy, statementCache, toPage, type KeysetAfter, type KeysetListArguments, type KeysetPage, type SortKeyDefinition } from './keysetPages.js';
import type { AttemptError } from './webhookDeliveries.js';
import { createEngineDeliveryQueue, notifyDeliveriesQueued, outboxEventTypes, type OutboxEventType } from './outboxEvents.js';
import { InvalidValueError, NotFoundError, ValueRefusedError, WebhookDisabledError, WebhookLimitError } from './workPlatformErrors.js';
import { changeWriter, checkText, creatorRemovedBinding, creatorRemovedCondition, parseTimestamp, versionedRow } from './workPlatformValues.js';

/** At most this many subscriptions per workspace. */
export const maximumWebhooksPerWorkspace = 20;
/** At most this many events per replay request. */
export const maximumReplayEvents = 1000;
/** The longest `description` the contract accepts. */
export const webhookDescriptionMaxLength = maxLengths.WebhookCreate.description;
/** The message of a subscription disabled through the API. */
export const manualDisableMessage = 'Set to DISABLED through the API.';

type Schemas = components['schemas'];
/** A subscription exactly as the API returns it (never with a secret). */
export type Webhook = Schemas['Webhook'];
export type WebhookKeyRotation = Schemas['WebhookKeyRotation'];
export type WebhookReplayRequest = Schemas['WebhookReplayRequest'];
export type WebhookReplay = Schemas['WebhookReplay'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
export type WebhookDeliveryAttempt = Schemas['WebhookDeliveryAttempt'];

/** A subscription to insert: its URL accepted by the target guard, its first secret sealed with its id. */
export interface NewWebhook {
  id: string;
  url: string;
  eventTypes: readonly string[];
  description?: string | null;
  sealedSecret: string;
  /** The user who creates it (`usr_…`); null when no user does (an operator's tool, the demo data). */
  createdBy: string | null;
}

/** The members to change; a `url` accepted by the target guard. */
export interface UpdateWebhookInput {
  url?: string;
  eventTypes?: readonly string[];
  description?: string | null;
  status?: WebhookSubscriptionStatus;
}

/** The new current secret, sealed with the subscription id, and when the replaced one stops signing. */
export interface NewSigningKey {
  sealedSecret: string;
  previousSecretExpiresAt: number;
}

interface PageOptions {
  /** Rows per page; the API allows 1 to 100. */
  limit: number;
  after?: KeysetAfter | null;
}

export interface WebhookListOptions extends PageOptions {
  /** Only what a removed user created (true), or only the rest (false). */
  creatorRemoved?: boolean;
}

export interface WebhookDeliveryListOptions extends PageOptions {
  status?: WebhookDeliveryStatus;
  eventId?: string;
}

export interface WebhookSubscriptionStoreOptions {
  now?: () => number;
  /** Source of delivery ids (replays). */
  randomBytes?: RandomBytes;
}

export interface WebhookSubscriptionStore {
  /** Inserts an ACTIVE subscription at version 1. */
  createWebhook(workspaceId: string, webhook: NewWebhook): Promise<Webhook>;
  /** Undefined when missing or in another workspace. */
  getWebhook(workspaceId: string, id: string): Promise<Webhook | undefined>;
  /** Newest first: created_at descending, then id descending. */
  listWebhooks(workspaceId: string, options: WebhookListOptions): Promise<KeysetPage<Webhook>>;
  /**
   * Applies the given members when `expectedVersion` is the current version; a patch that changes
   * nothing writes nothing. DISABLED (from ACTIVE) records reason MANUAL and cancels the pending
   * deliveries; ACTIVE (from DISABLED) clears the reason and the failure count.
   */
  updateWebhook(workspaceId: string, id: string, patch: UpdateWebhookInput, expectedVersion: number): Promise<Webhook>;
  /** Deletes the subscription with its deliveries and attempts; `expectedVersion`, when given, must be current. */
  deleteWebhook(workspaceId: string, id: string, expectedVersion: number | null): Promise<void>;
  /** Makes `key` the current secret; the replaced one signs until its expiry, an older one is dropped. */
  rotateWebhookKey(workspaceId: string, id: string, key: NewSigningKey): Promise<Omit<WebhookKeyRotation, 'secret'>>;
  /** Queues replay deliveries of one event or of a time range (`from` inclusive, `to` exclusive). */
  replayWebhookEvents(workspaceId: string, id: string, request: WebhookReplayRequest): Promise<WebhookReplay>;
  /** The subscription's deliveries, newest first, each with its attempts; NotFoundError when the subscription is not found. */
  listWebhookDeliveries(workspaceId: string, id: string, options: WebhookDeliveryListOptions): Promise<KeysetPage<WebhookDelivery>>;
}

type SubscriptionRow = typeof webhookSubscriptions.$inferSelect;
type DeliveryRow = typeof webhookDeliveries.$inferSelect;
type AttemptRow = typeof webhookAttempts.$inferSelect;

const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

function toWebhook(row: SubscriptionRow, now: number): Webhook {
  const overlapLasts = row.previousSecretExpiresAt !== null && row.previousSecretExpiresAt > now;
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    eventTypes: JSON.parse(row.eventTypes) as OutboxEventType[],
    status: row.status,
    disabledReason:
      row.status === 'DISABLED' && row.disabledCode !== null
        ? { code: row.disabledCode, message: row.disabledMessage ?? '', disabledAt: iso(row.disabledAt ?? row.updatedAt) }
        : null,
    consecutiveFailedEvents: row.consecutiveFailedEvents,
    signingKeyVersion: row.signingKeyVersion,
    previousSigningKeyExpiresAt: overlapLasts ? iso(row.previousSecretExpiresAt!) : null,
    version: row.version,
    createdBy: row.createdBy,
    creatorRemoved: row.creatorRemovedAt !== null,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

function toAttempt(row: AttemptRow): WebhookDeliveryAttempt {
  return {
    number: row.number,
    attemptedAt: iso(row.attemptedAt),
    durationMs: row.durationMs,
    statusCode: row.statusCode,
    error: row.errorCode === null ? null : { code: row.errorCode as AttemptError['code'], message: row.errorMessage ?? row.errorCode },
    succeeded: row.succeeded,
    nextAttemptAt: isoOrNull(row.nextAttemptAt),
  };
}

function toDelivery(row: DeliveryRow, attempts: WebhookDeliveryAttempt[]): WebhookDelivery {
  return {
    id: row.id,
    subscriptionId: row.subscriptionId,
    eventId: row.eventId,
    eventType: row.eventType as OutboxEventType,
    replay: row.replay,
    status: row.status,
    createdAt: iso(row.createdAt),
    nextAttemptAt: isoOrNull(row.nextAttemptAt),
    completedAt: isoOrNull(row.completedAt),
    attempts,
  };
}

function checkEventTypes(eventTypes: unknown): asserts eventTypes is OutboxEventType[] {
  if (!Array.isArray(eventTypes) || eventTypes.length === 0) throw new InvalidValueError('eventTypes', 'must list at least one event type.');
  for (const type of eventTypes) {
    if (!(outboxEventTypes as readonly unknown[]).includes(type)) {
      throw new InvalidValueError('eventTypes', `must hold only ${outboxEventTypes.join(', ')}.`);
    }
  }
  if (new Set(eventTypes).size !== eventTypes.length) throw new InvalidValueError('eventTypes', 'must not repeat an event type.');
}

function checkDescription(description: unknown): void {
  if (description !== undefined && description !== null) {
    checkText('description', description, webhookDescriptionMaxLength, { allowEmpty: true });
  }
}

const sameTypes = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((type) => b.includes(type));


type ListedSubscriptionRow = SubscriptionRow & { sortKey: number };
type ListedDeliveryRow = DeliveryRow & { sortKey: number };

export function createWebhookSubscriptionStore(source: StoreSource, options: WebhookSubscriptionStoreOptions): WebhookSubscriptionStore {
  const now = options.now ?? Date.now;
  const randomBytes = options.randomBytes ?? defaultRandomBytes;
  const engine = engineOf(source);
  const { orm } = engine;
  const write = changeWriter(engine, {});

  const inWorkspace = and(eq(webhookSubscriptions.workspaceId, sql.placeholder('workspaceId')), eq(webhookSubscriptions.id, sql.placeholder('id')));
  const selectOne = engine.statement<SubscriptionRow, { workspaceId: string; id: string }>(orm.select().from(webhookSubscriptions).where(inWorkspace));
  const countInWorkspace = engine.statement<unknown, { workspaceId: string }>(
    orm
      .select({ total: count() })
      .from(webhookSubscriptions)
      .where(eq(webhookSubscriptions.workspaceId, sql.placeholder('workspaceId'))),
  );
  const insert = engine.statement(
    orm.insert(webhookSubscriptions).values({
      id: sql.placeholder('id'),
      workspaceId: sql.placeholder('workspaceId'),
      url: sql.placeholder('url'),
      description: sql.placeholder('description'),
      eventTypes: sql.placeholder('eventTypes'),
      status: 'ACTIVE',
      consecutiveFailedEvents: 0,
      signingKeyVersion: 1,
      sealedSecret: sql.placeholder('sealedSecret'),
      version: 1,
      createdBy: sql.placeholder('createdBy'),
      createdAt: sql.placeholder('now'),
      updatedAt: sql.placeholder('now'),
    }),
  );
  const placeholderOf = (name: string) => sql`${sql.placeholder(name)}`;
  const update = engine.statement(
    orm
      .update(webhookSubscriptions)
      .set({
        url: placeholderOf('url'),
        description: placeholderOf('description'),
        eventTypes: placeholderOf('eventTypes'),
        status: placeholderOf('status'),
        disabledCode: placeholderOf('disabledCode'),
        disabledMessage: placeholderOf('disabledMessage'),
        disabledAt: placeholderOf('disabledAt'),
        consecutiveFailedEvents: placeholderOf('consecutiveFailedEvents'),
        signingKeyVersion: placeholderOf('signingKeyVersion'),
        sealedSecret: placeholderOf('sealedSecret'),
        sealedPreviousSecret: placeholderOf('sealedPreviousSecret'),
        previousSecretExpiresAt: placeholderOf('previousSecretExpiresAt'),
        version: placeholderOf('version'),
        updatedAt: placeholderOf('updatedAt'),
      })
      .where(inWorkspace),
  );
  const remove = engine.statement(orm.delete(webhookSubscriptions).where(inWorkspace));
  const cancelPending = engine.statement(
    orm
      .update(webhookDeliveries)
      .set({ status: 'CANCELLED', nextAttemptAt: null, completedAt: placeholderOf('now'), leaseOwner: null, leaseExpiresAt: null })
      .where(and(eq(webhookDeliveries.subscriptionId, sql.placeholder('id')), eq(webhookDeliveries.status, 'PENDING'))),
  );

  type FoundEvent = { id: string; type: string };
  const selectEvent = engine.statement<FoundEvent, { workspaceId: string; eventId: string }>(
    orm
      .select({ id: events.id, type: events.type })
      .from(events)
      .where(and(eq(events.workspaceId, sql.placeholder('workspaceId')), eq(events.id, sql.placeholder('eventId')))),
  );
  // One more than the cap, so that a range over it is recognized without counting it all.
  const selectEventRange = engine.statement<FoundEvent, { workspaceId: string; from: number; to: number; types: string }>(
    orm
      .select({ id: events.id, type: events.type })
      .from(events)
      .where(
        and(
          eq(events.workspaceId, sql.placeholder('workspaceId')),
          gte(events.occurredAt, sql.placeholder('from')),
          lt(events.occurredAt, sql.placeholder('to')),
          engine.dialect.inJsonArray(events.type, sql.placeholder('types')),
        ),
      )
      .orderBy(asc(events.occurredAt), asc(events.id))
      .limit(maximumReplayEvents + 1),
  );
  const deliveryQueue = createEngineDeliveryQueue(engine, randomBytes);

  const subscriptionCreatedAt: SortKeyDefinition = { expression: webhookSubscriptions.createdAt, keyType: 'number' };
  const deliveryCreatedAt: SortKeyDefinition = { expression: webhookDeliveries.createdAt, keyType: 'number' };
  const listStatements = statementCache<ReturnType<typeof prepareList>>();
  const deliveryStatements = statementCache<ReturnType<typeof prepareDeliveryList>>();
  const selectAttempts = engine.statement<AttemptRow, { deliveryIds: string }>(
    orm
      .select()
      .from(webhookAttempts)
      .where(engine.dialect.inJsonArray(webhookAttempts.deliveryId, sql.placeholder('deliveryIds')))
      .orderBy(asc(webhookAttempts.deliveryId), asc(webhookAttempts.number)),
  );

  function prepareList(afterPosition: boolean, byCreatorRemoved: boolean) {
    const conditions = [eq(webhookSubscriptions.workspaceId, sql.placeholder('workspaceId'))];
    if (byCreatorRemoved) conditions.push(creatorRemovedCondition(webhookSubscriptions.creatorRemovedAt));
    if (afterPosition) conditions.push(keysetCondition(subscriptionCreatedAt, webhookSubscriptions.id, 'desc'));
    return engine.statement<ListedSubscriptionRow, KeysetListArguments & { creatorRemoved?: 0 | 1 }>(
      orm
        .select({ ...getTableColumns(webhookSubscriptions), sortKey: sql<number>`${webhookSubscriptions.createdAt}` })
        .from(webhookSubscriptions)
        .where(and(...conditions))
        .orderBy(...keysetOrderBy(subscriptionCreatedAt, webhookSubscriptions.id, 'desc'))
        .limit(sql.placeholder('limit')),
    );
  }

  function prepareDeliveryList(afterPosition: boolean, byStatus: boolean, byEvent: boolean) {
    const conditions = [eq(webhookDeliveries.subscriptionId, sql.placeholder('subscriptionId'))];
    if (byStatus) conditions.push(eq(webhookDeliveries.status, sql.placeholder('status')));
    if (byEvent) conditions.push(eq(webhookDeliveries.eventId, sql.placeholder('eventId')));
    if (afterPosition) conditions.push(keysetCondition(deliveryCreatedAt, webhookDeliveries.id, 'desc'));
    return engine.statement<ListedDeliveryRow, Omit<KeysetListArguments, 'workspaceId'> & { subscriptionId: string; status?: string; eventId?: string }>(
      orm
        .select({ ...getTableColumns(webhookDeliveries), sortKey: sql<number>`${webhookDeliveries.createdAt}` })
        .from(webhookDeliveries)
        .where(and(...conditions))
        .orderBy(...keysetOrderBy(deliveryCreatedAt, webhookDeliveries.id, 'desc'))
        .limit(sql.placeholder('limit')),
    );
  }

  function checkPage(options: WebhookListOptions): void {
    if (!Number.isSafeInteger(options.limit) || options.limit < 1 || options.limit > 1000) {
      throw new InvalidValueError('limit', 'must be a whole number from 1 to 1000.');
    }
    const after = options.after;
    if (after && (!Number.isSafeInteger(after.key) || typeof after.id !== 'string')) {
      throw new InvalidValueError('cursor', 'does not hold a position of this list.');
    }
  }

  async function currentRow(workspaceId: string, id: string, expectedVersion: number | null): Promise<SubscriptionRow> {
    return versionedRow('webhook', id, await selectOne.object({ workspaceId, id }), expectedVersion);
  }

  async function saveRow(row: SubscriptionRow): Promise<void> {
    await update.run({ ...row });
  }

  async function queueReplays(row: SubscriptionRow, found: FoundEvent[], at: number): Promise<WebhookReplay> {
    const deliveries: WebhookReplay['deliveries'] = [];
    for (const event of found) {
      const eventType = event.type as OutboxEventType;
      const id = await deliveryQueue.queue({ subscriptionId: row.id, workspaceId: row.workspaceId, eventId: event.id, eventType, replay: true, dueAt: at });
      deliveries.push({ id, eventId: event.id, eventType });
    }
    return { subscriptionId: row.id, eventCount: deliveries.length, deliveries };
  }

  return {
    async createWebhook(workspaceId, input) {
      checkEventTypes(input.eventTypes);
      checkDescription(input.description);
      const at = now();
      const row: SubscriptionRow = {
        id: input.id,
        workspaceId,
        url: input.url,
        description: input.description ?? null,
        eventTypes: JSON.stringify(input.eventTypes),
        status: 'ACTIVE',
        disabledCode: null,
        disabledMessage: null,
        disabledAt: null,
        consecutiveFailedEvents: 0,
        signingKeyVersion: 1,
        sealedSecret: input.sealedSecret,
        sealedPreviousSecret: null,
        previousSecretExpiresAt: null,
        version: 1,
        createdAt: at,
        updatedAt: at,
        createdBy: input.createdBy,
        creatorRemovedAt: null,
      };
      return write(async () => {
        const total = Number(await countInWorkspace.value({ workspaceId }));
        if (total >= maximumWebhooksPerWorkspace) throw new WebhookLimitError(maximumWebhooksPerWorkspace);
        await insert.run({ ...row, now: at });
        return toWebhook(row, at);
      });
    },

    async getWebhook(workspaceId, id) {
      const row = await engine.read(() => selectOne.object({ workspaceId, id }));
      return row ? toWebhook(row, now()) : undefined;
    },

    async listWebhooks(workspaceId, listOptions) {
      checkPage(listOptions);
      const after = listOptions.after ?? null;
      const creatorRemoved = creatorRemovedBinding(listOptions.creatorRemoved);
      const byCreatorRemoved = creatorRemoved !== undefined;
      const statement = listStatements(`${after ? 'after' : 'first'}:${byCreatorRemoved}`, () => prepareList(after !== null, byCreatorRemoved));
      const rows = await engine.read(() =>
        statement.objects({ workspaceId, limit: listOptions.limit + 1, afterKey: after?.key, afterId: after?.id, ...(byCreatorRemoved ? { creatorRemoved } : {}) }),
      );
      const at = now();
      return toPage(rows, listOptions.limit, ({ sortKey: _sortKey, ...row }) => toWebhook(row, at));
    },

    async updateWebhook(workspaceId, id, patch, expectedVersion) {
      const { url } = patch;
      if (patch.eventTypes !== undefined) checkEventTypes(patch.eventTypes);
      checkDescription(patch.description);
      if (patch.status !== undefined && patch.status !== 'ACTIVE' && patch.status !== 'DISABLED') {
        throw new InvalidValueError('status', 'must be ACTIVE or DISABLED.');
      }
      return write(async () => {
        const current = await currentRow(workspaceId, id, expectedVersion);
        const at = now();
        const next: SubscriptionRow = { ...current };
        if (url !== undefined) next.url = url;
        if (patch.eventTypes !== undefined && !sameTypes(patch.eventTypes, JSON.parse(current.eventTypes) as string[])) {
          next.eventTypes = JSON.stringify(patch.eventTypes);
        }
        if (patch.description !== undefined) next.description = patch.description;
        const disabling = patch.status === 'DISABLED' && current.status === 'ACTIVE';
        if (disabling) {
          Object.assign(next, { status: 'DISABLED', disabledCode: 'MANUAL', disabledMessage: manualDisableMessage, disabledAt: at });
        } else if (patch.status === 'ACTIVE' && current.status === 'DISABLED') {
          Object.assign(next, { status: 'ACTIVE', disabledCode: null, disabledMessage: null, disabledAt: null, consecutiveFailedEvents: 0 });
        }
        const changed = (['url', 'eventTypes', 'description', 'status'] as const).some((column) => next[column] !== current[column]);
        if (!changed) return toWebhook(current, at);
        next.version = current.version + 1;
        next.updatedAt = at;
        await saveRow(next);
        if (disabling) await cancelPending.run({ id, now: at });
        return toWebhook(next, at);
      });
    },

    async deleteWebhook(workspaceId, id, expectedVersion) {
      await write(async () => {
        await currentRow(workspaceId, id, expectedVersion);
        await remove.run({ workspaceId, id });
      });
    },

    async rotateWebhookKey(workspaceId, id, key) {
      return write(async () => {
        const current = await currentRow(workspaceId, id, null);
        // The sealed current secret moves as is: it is bound to the subscription id, not to its column.
        const next: SubscriptionRow = {
          ...current,
          sealedSecret: key.sealedSecret,
          sealedPreviousSecret: current.sealedSecret,
          previousSecretExpiresAt: key.previousSecretExpiresAt,
          signingKeyVersion: current.signingKeyVersion + 1,
          version: current.version + 1,
          updatedAt: now(),
        };
        await saveRow(next);
        return { id, signingKeyVersion: next.signingKeyVersion, previousSigningKeyExpiresAt: iso(key.previousSecretExpiresAt) };
      });
    },

    async replayWebhookEvents(workspaceId, id, request) {
      const range = 'eventId' in request ? undefined : { from: parseTimestamp('from', request.from), to: parseTimestamp('to', request.to) };
      if (range && range.to <= range.from) {
        throw new ValueRefusedError([{ path: '/to', code: 'too_small', message: 'must be later than from' }]);
      }
      const replay = await write(async () => {
        const row = await currentRow(workspaceId, id, null);
        if (row.status !== 'ACTIVE') throw new WebhookDisabledError(id);
        const at = now();
        if (!range) {
          const eventId = (request as { eventId: string }).eventId;
          const event = await selectEvent.object({ workspaceId, eventId });
          if (!event) throw new NotFoundError('event', eventId);
          return queueReplays(row, [event], at);
        }
        const found = await selectEventRange.objects({ workspaceId, from: range.from, to: range.to, types: row.eventTypes });
        if (found.length > maximumReplayEvents) {
          throw new ValueRefusedError([
            {
              path: '/to',
              code: 'too_big',
              message: `makes a range of more than ${maximumReplayEvents} events; narrow it (nothing was queued)`,
            },
          ]);
        }
        return queueReplays(row, found, at);
      });
      if (replay.eventCount > 0) notifyDeliveriesQueued(engine);
      return replay;
    },

    async listWebhookDeliveries(workspaceId, id, listOptions) {
      checkPage(listOptions);
      const after = listOptions.after ?? null;
      const byStatus = listOptions.status !== undefined;
      const byEvent = listOptions.eventId !== undefined;
      const statement = deliveryStatements(`${after ? 'after' : 'first'}:${byStatus}:${byEvent}`, () =>
        prepareDeliveryList(after !== null, byStatus, byEvent),
      );
      const { rows, attemptRows } = await engine.snapshot(async () => {
        if (!(await selectOne.object({ workspaceId, id }))) throw new NotFoundError('webhook', id);
        const rows = await statement.objects({
          subscriptionId: id,
          status: listOptions.status,
          eventId: listOptions.eventId,
          limit: listOptions.limit + 1,
          afterKey: after?.key,
          afterId: after?.id,
        });
        const pageRows = rows.slice(0, listOptions.limit);
        const attemptRows = pageRows.length > 0 ? await selectAttempts.objects({ deliveryIds: JSON.stringify(pageRows.map((row) => row.id)) }) : [];
        return { rows, attemptRows };
      });
      const attempts = new Map<string, WebhookDeliveryAttempt[]>();
      for (const attempt of attemptRows) {
        const list = attempts.get(attempt.deliveryId) ?? [];
        list.push(toAttempt(attempt));
        attempts.set(attempt.deliveryId, list);
      }
      return toPage(rows, listOptions.limit, ({ sortKey: _sortKey, ...row }) => toDelivery(row, attempts.get(row.id) ?? []));
    },
  };
}
