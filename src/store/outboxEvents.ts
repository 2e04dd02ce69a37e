// The outbox: every change to a task or project inserts, in the same transaction, one `events`
// row holding the whole webhook envelope. The webhook worker delivers the rows later.
import type BetterSqlite3 from 'better-sqlite3';
import { sql } from 'drizzle-orm';
import { events } from '../../db/schema.js';
import { drizzleFor } from './drizzle.js';
import { newId, type RandomBytes } from './ids.js';

/** Version of the envelope shape, sent as `apiVersion` in every delivery. */
export const webhookApiVersion = '2026-11-23';

export const outboxEventTypes = [
  'task.created',
  'task.updated',
  'task.completed',
  'task.deleted',
  'project.created',
  'project.updated',
  'project.deleted',
] as const;
export type OutboxEventType = (typeof outboxEventTypes)[number];

/** Who caused a change: the session's user, or the user a personal access token belongs to. */
export interface EventActor {
  id: string;
  kind: 'USER';
}

/** The webhook delivery body, exactly as stored in `events.payload`. */
export interface WebhookEnvelope<T = unknown> {
  id: string;
  type: OutboxEventType;
  apiVersion: string;
  /** ISO 8601 UTC with milliseconds. */
  createdAt: string;
  /** The workspace id (`ten_…`). */
  tenantId: string;
  actor: EventActor;
  data: { object: T };
}

/**
 * Prepares the insert once per connection; `record()` must run inside the caller's transaction,
 * so the event exists exactly when the change does.
 */
export function createOutboxWriter(db: BetterSqlite3.Database, randomBytes: RandomBytes) {
  const insert = drizzleFor(db)
    .insert(events)
    .values({
      id: sql.placeholder('id'),
      workspaceId: sql.placeholder('workspaceId'),
      type: sql.placeholder('type'),
      occurredAt: sql.placeholder('occurredAt'),
      payload: sql.placeholder('payload'),
    })
    .prepare();
  return {
    record<T>(workspaceId: string, type: OutboxEventType, actor: EventActor, occurredAt: number, object: T): WebhookEnvelope<T> {
      const envelope: WebhookEnvelope<T> = {
        id: newId('evt', randomBytes),
        type,
        apiVersion: webhookApiVersion,
        createdAt: new Date(occurredAt).toISOString(),
        tenantId: workspaceId,
        actor: { id: actor.id, kind: actor.kind },
        data: { object },
      };
      insert.run({ id: envelope.id, workspaceId, type, occurredAt, payload: JSON.stringify(envelope) });
      return envelope;
    },
  };
}

export type OutboxWriter = ReturnType<typeof createOutboxWriter>;
