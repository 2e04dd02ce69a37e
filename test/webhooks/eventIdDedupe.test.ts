import { describe, expect, it } from 'vitest';
import { MIN_EVENT_ID_RETENTION_MS, MemoryEventIdStore, createEventIdDedupe, type EventIdStore } from '../../src/webhooks/eventIdDedupe.js';

const HOUR = 3600 * 1000;

function manualClock(startMs = 1_700_000_000_000) {
  let nowMs = startMs;
  return { now: () => nowMs, advance: (ms: number) => void (nowMs += ms) };
}

describe('createEventIdDedupe', () => {
  it('answers true once per event id, then false', () => {
    const dedupe = createEventIdDedupe();
    expect(dedupe.firstTime('evt_1')).toBe(true);
    expect(dedupe.firstTime('evt_1')).toBe(false);
    expect(dedupe.firstTime('evt_1')).toBe(false);
    expect(dedupe.firstTime('evt_2')).toBe(true);
  });

  it('keeps ids 35 hours by default (the whole retry schedule of one event)', () => {
    expect(MIN_EVENT_ID_RETENTION_MS).toBe(35 * HOUR);
    const retrySchedule = [30, 120, 600, 1800, 7200, 28_800, 86_400].reduce((sum, s) => sum + s * 1000, 0);
    expect(MIN_EVENT_ID_RETENTION_MS).toBeGreaterThan(retrySchedule);
    const clock = manualClock();
    const dedupe = createEventIdDedupe({ now: clock.now });
    expect(dedupe.retentionMs).toBe(35 * HOUR);
    expect(dedupe.firstTime('evt_1')).toBe(true);
    clock.advance(retrySchedule); // the last retry of the same event
    expect(dedupe.firstTime('evt_1')).toBe(false);
  });

  it('forgets an id exactly when its retention has passed (injected clock)', () => {
    const clock = manualClock();
    const dedupe = createEventIdDedupe({ now: clock.now });
    dedupe.firstTime('evt_1');
    clock.advance(35 * HOUR - 1);
    expect(dedupe.firstTime('evt_1')).toBe(false);
    clock.advance(1);
    expect(dedupe.firstTime('evt_1')).toBe(true);
    // Recorded again from now on.
    clock.advance(35 * HOUR - 1);
    expect(dedupe.firstTime('evt_1')).toBe(false);
  });

  it('a duplicate does not extend the retention of the first record', () => {
    const clock = manualClock();
    const dedupe = createEventIdDedupe({ now: clock.now });
    dedupe.firstTime('evt_1');
    clock.advance(20 * HOUR);
    expect(dedupe.firstTime('evt_1')).toBe(false);
    clock.advance(15 * HOUR);
    expect(dedupe.firstTime('evt_1')).toBe(true);
  });

  it('honours a longer retention for receivers that replay by hand', () => {
    const clock = manualClock();
    const dedupe = createEventIdDedupe({ now: clock.now, retentionMs: 7 * 24 * HOUR });
    dedupe.firstTime('evt_1');
    clock.advance(6 * 24 * HOUR);
    expect(dedupe.firstTime('evt_1')).toBe(false);
    clock.advance(24 * HOUR);
    expect(dedupe.firstTime('evt_1')).toBe(true);
  });

  it('refuses a retention under 35 hours', () => {
    expect(() => createEventIdDedupe({ retentionMs: 35 * HOUR - 1 })).toThrow(RangeError);
    expect(() => createEventIdDedupe({ retentionMs: 24 * HOUR })).toThrow(RangeError);
    expect(() => createEventIdDedupe({ retentionMs: Number.NaN })).toThrow(RangeError);
    expect(createEventIdDedupe({ retentionMs: 35 * HOUR }).retentionMs).toBe(35 * HOUR);
  });

  it('forget() lets a retry of a failed event be processed', () => {
    const dedupe = createEventIdDedupe();
    expect(dedupe.firstTime('evt_1')).toBe(true);
    void dedupe.forget('evt_1');
    expect(dedupe.firstTime('evt_1')).toBe(true);
  });

  it('refuses an empty event id', () => {
    expect(() => createEventIdDedupe().firstTime('')).toThrow(TypeError);
  });
});

describe('MemoryEventIdStore', () => {
  it('prunes expired ids as new ones arrive, so memory stays bounded by the retention', () => {
    const clock = manualClock();
    const store = new MemoryEventIdStore();
    const dedupe = createEventIdDedupe({ now: clock.now, store });
    for (let i = 0; i < 100; i++) {
      dedupe.firstTime(`evt_${i}`);
      clock.advance(HOUR);
    }
    // Ids older than 35 hours are gone; the last 35 remain (the one at exactly 35 h has expired).
    expect(store.size).toBe(35);
    clock.advance(35 * HOUR);
    store.prune(clock.now());
    expect(store.size).toBe(0);
  });

  it('keeps answering correctly when the clock goes back', () => {
    const clock = manualClock();
    const store = new MemoryEventIdStore();
    const dedupe = createEventIdDedupe({ now: clock.now, store });
    dedupe.firstTime('evt_a');
    clock.advance(-HOUR);
    dedupe.firstTime('evt_b');
    // Now evt_b (behind evt_a in the Map) has expired but evt_a has not: pruning stops at evt_a.
    clock.advance(35.5 * HOUR);
    expect(dedupe.firstTime('evt_b')).toBe(true);
    expect(dedupe.firstTime('evt_a')).toBe(false);
    clock.advance(HOUR);
    expect(dedupe.firstTime('evt_a')).toBe(true);
    expect(dedupe.firstTime('evt_b')).toBe(false);
  });
});

describe('a pluggable store', () => {
  it('uses the store given, asynchronous ones included', async () => {
    const rows = new Map<string, number>();
    const calls: string[] = [];
    const asyncStore: EventIdStore<Promise<boolean>> = {
      async recordIfAbsent(eventId, expiresAtMs, nowMs) {
        calls.push(`record ${eventId} ${expiresAtMs - nowMs}`);
        const expiresAt = rows.get(eventId);
        if (expiresAt !== undefined && expiresAt > nowMs) return false;
        rows.set(eventId, expiresAtMs);
        return true;
      },
      async remove(eventId) {
        rows.delete(eventId);
      },
    };
    const clock = manualClock();
    const dedupe = createEventIdDedupe({ now: clock.now, store: asyncStore, retentionMs: 48 * HOUR });
    expect(await dedupe.firstTime('evt_1')).toBe(true);
    expect(await dedupe.firstTime('evt_1')).toBe(false);
    expect(calls).toStrictEqual([`record evt_1 ${48 * HOUR}`, `record evt_1 ${48 * HOUR}`]);
    await dedupe.forget('evt_1');
    expect(await dedupe.firstTime('evt_1')).toBe(true);
  });
});
