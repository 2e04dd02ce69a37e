import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';
import { createRateLimitCounterStore } from '../../src/store/rateLimitCounters.js';
import { makeDatabase, type TempDatabase } from './factories.js';

let t: TempDatabase;
beforeEach(() => {
  t = makeDatabase();
});
afterEach(() => t.cleanup());

describe('rate-limit counter store', () => {
  it('adds calls per bucket and window and returns the new count', () => {
    const counters = createRateLimitCounterStore(t.db);
    expect(counters.addCalls('a', 60_000, 1)).toBe(1);
    expect(counters.addCalls('a', 60_000, 3)).toBe(4);
    expect(counters.addCalls('a', 120_000, 1)).toBe(1);
    expect(counters.addCalls('b', 60_000, 2)).toBe(2);
    expect(t.db.prepare('SELECT bucket, window_start, count FROM rate_limit_counters ORDER BY bucket, window_start').raw().all()).toEqual([
      ['a', 60_000, 4],
      ['a', 120_000, 1],
      ['b', 60_000, 2],
    ]);
  });

  it('shares one count between connections (processes) on the same file', () => {
    const other = openDatabase(t.path);
    try {
      const here = createRateLimitCounterStore(t.db);
      const there = createRateLimitCounterStore(other);
      expect(here.addCalls('shared', 0, 1)).toBe(1);
      expect(there.addCalls('shared', 0, 1)).toBe(2);
      expect(here.addCalls('shared', 0, 5)).toBe(7);
    } finally {
      other.close();
    }
  });

  it('purges the windows that started before a time, and only those', () => {
    const counters = createRateLimitCounterStore(t.db);
    counters.addCalls('a', 0, 1);
    counters.addCalls('b', 60_000, 1);
    counters.addCalls('a', 120_000, 1);
    expect(counters.purgeWindowsBefore(120_000)).toBe(2);
    expect(counters.purgeWindowsBefore(120_000)).toBe(0);
    expect(counters.addCalls('a', 120_000, 1)).toBe(2);
  });
});
