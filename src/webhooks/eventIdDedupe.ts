/**
 * Receiver side: skip an event already processed. A sender retries one event for about 35 hours
 * (30 s, 2 min, 10 min, 30 min, 2 h, 8 h, 24 h) and replays keep the event id, so an id is kept at
 * least that long; keep it longer if you replay by hand later than that.
 */

export const MIN_EVENT_ID_RETENTION_MS = 35 * 3600 * 1000;

/**
 * Where seen event ids live. `recordIfAbsent` must be atomic (one winner when two deliveries of one
 * event race), e.g. `INSERT … ON CONFLICT DO UPDATE … WHERE expires_at <= :now` and reading whether
 * a row was written. It answers a boolean or, for an asynchronous database, a promise of one.
 */
export interface EventIdStore<Answer extends boolean | Promise<boolean> = boolean> {
  /** Records `eventId` until `expiresAtMs` unless a record that has not expired at `nowMs` exists; true when it recorded. */
  recordIfAbsent(eventId: string, expiresAtMs: number, nowMs: number): Answer;
  /** Drops the record, so a later delivery of the event is processed again. */
  remove(eventId: string): void | Promise<void>;
}

/** The default store: a Map in insertion order, pruned of expired ids as new ones arrive. */
export class MemoryEventIdStore implements EventIdStore<boolean> {
  readonly #expiresAt = new Map<string, number>();

  get size(): number {
    return this.#expiresAt.size;
  }

  recordIfAbsent(eventId: string, expiresAtMs: number, nowMs: number): boolean {
    this.prune(nowMs);
    const current = this.#expiresAt.get(eventId);
    if (current !== undefined && current > nowMs) return false;
    // Delete first so the id moves to the end and the Map stays ordered by expiry.
    this.#expiresAt.delete(eventId);
    this.#expiresAt.set(eventId, expiresAtMs);
    return true;
  }

  remove(eventId: string): void {
    this.#expiresAt.delete(eventId);
  }

  /** Drops expired ids from the front; stops at the first live one (later ones expire later). */
  prune(nowMs: number): void {
    for (const [eventId, expiresAt] of this.#expiresAt) {
      if (expiresAt > nowMs) break;
      this.#expiresAt.delete(eventId);
    }
  }
}

export interface EventIdDedupeOptions<Answer extends boolean | Promise<boolean>> {
  /** How long an id is remembered; at least {@link MIN_EVENT_ID_RETENTION_MS} (35 hours). */
  retentionMs?: number;
  /** Milliseconds since the epoch. */
  now?: () => number;
  store?: EventIdStore<Answer>;
}

export interface EventIdDedupe<Answer extends boolean | Promise<boolean>> {
  readonly retentionMs: number;
  /** True exactly once per event id within the retention: process the event then, skip it otherwise. */
  firstTime(eventId: string): Answer;
  /** Forget an id whose processing failed, so the sender's retry is processed (answer non-2xx then). */
  forget(eventId: string): void | Promise<void>;
}

/** With the in-memory store (one process; ids are lost on restart). */
export function createEventIdDedupe(options?: EventIdDedupeOptions<boolean>): EventIdDedupe<boolean>;
/** With your store; `firstTime` answers what the store answers (a promise for an async database). */
export function createEventIdDedupe<Answer extends boolean | Promise<boolean>>(
  options: EventIdDedupeOptions<Answer> & { store: EventIdStore<Answer> },
): EventIdDedupe<Answer>;
export function createEventIdDedupe({
  retentionMs = MIN_EVENT_ID_RETENTION_MS,
  now = Date.now,
  store = new MemoryEventIdStore(),
}: EventIdDedupeOptions<boolean | Promise<boolean>> = {}): EventIdDedupe<boolean | Promise<boolean>> {
  if (!Number.isFinite(retentionMs) || retentionMs < MIN_EVENT_ID_RETENTION_MS) {
    throw new RangeError(`retentionMs must be at least ${MIN_EVENT_ID_RETENTION_MS} (35 hours): retries of one event span about that long`);
  }
  return {
    retentionMs,
    firstTime(eventId) {
      if (typeof eventId !== 'string' || eventId.length === 0) throw new TypeError('eventId must be a non-empty string');
      const nowMs = now();
      return store.recordIfAbsent(eventId, nowMs + retentionMs, nowMs);
    },
    forget(eventId) {
      return store.remove(eventId);
    },
  };
}
