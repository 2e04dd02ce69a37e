import type BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteRateLimiter } from '../../src/limits/rateLimiter.js';
import { openDatabase } from '../../src/store/database.js';
import { makeDatabase, type TempDatabase } from '../store/factories.js';

const WINDOW = 60_000;
let t: TempDatabase;
let clock: number;
let limiter: SqliteRateLimiter;
beforeEach(() => {
  t = makeDatabase();
  clock = Date.UTC(2030, 0, 1, 0, 0, 1);
  limiter = new SqliteRateLimiter(t.db, () => clock);
});
afterEach(() => t.cleanup());

const shared = (bucket: string) => (t.db.prepare('SELECT coalesce(sum(count), 0) FROM rate_limit_counters WHERE bucket = ?').pluck().get(bucket) as number);
const consume = (bucket: string, limit: number) => limiter.countTogether(() => limiter.consume(bucket, limit, WINDOW), () => limiter.estimate(bucket, limit, WINDOW));
const call = (bucket: string, limit: number) => limiter.countLocally(bucket, limit, WINDOW) ?? consume(bucket, limit);

describe('counting in this process alone', () => {
  it('counts locally far from the limit, writes what it owes on the next database count, and reports one sequence', () => {
    const remaining: number[] = [];
    for (let index = 0; index < 40; index += 1) remaining.push(call('far', 1000).remaining);
    expect(remaining).toEqual(Array.from({ length: 40 }, (_, index) => 999 - index));
    // At most a quarter of the margin (100) is held unwritten at once.
    expect(shared('far')).toBeGreaterThanOrEqual(40 - 25);
    clock += 100;
    call('far', 1000);
    expect(shared('far')).toBe(41);
  });

  it('writes every call within a tenth of the limit, so the limit is exact across processes', () => {
    const other = openDatabase(t.path);
    try {
      const otherLimiter = new SqliteRateLimiter(other, () => clock);
      const otherCall = () =>
        otherLimiter.countLocally('near', 20, WINDOW) ??
        otherLimiter.countTogether(() => otherLimiter.consume('near', 20, WINDOW), () => otherLimiter.estimate('near', 20, WINDOW));
      const allowed: boolean[] = [];
      for (let index = 0; index < 30; index += 1) allowed.push((index % 2 === 0 ? call('near', 20) : otherCall()).allowed);
      expect(allowed.filter(Boolean)).toHaveLength(20);
      expect(shared('near')).toBe(30);
    } finally {
      other.close();
    }
  });

  it("counts a call's units (x-ratelimit-cost) alone, together and on the estimate, and never locally past the margin", () => {
    const units = (bucket: string, limit: number, cost: number) =>
      limiter.countLocally(bucket, limit, WINDOW, cost) ??
      limiter.countTogether(() => limiter.consume(bucket, limit, WINDOW, cost), () => limiter.estimate(bucket, limit, WINDOW, cost));
    expect(units('costly', 1000, 20).remaining).toBe(980);
    expect(shared('costly')).toBe(20);
    // Counted locally (far from the limit, within the quarter margin of 25 units), then written with the next count.
    expect(units('costly', 1000, 20).remaining).toBe(960);
    expect(units('costly', 1000, 20).remaining).toBe(940);
    expect(shared('costly')).toBe(60);
    // Near the limit every call is written: 60 + 20 × 46 = 980, the next 20 units leave 0, the one after is refused.
    for (let index = 0; index < 46; index += 1) units('costly', 1000, 20);
    expect(units('costly', 1000, 20)).toMatchObject({ allowed: true, remaining: 0 });
    expect(units('costly', 1000, 20)).toMatchObject({ allowed: false, remaining: 0 });
    expect(shared('costly')).toBe(1020);
  });

  it('never counts locally a bucket it has not written in this window', () => {
    expect(limiter.countLocally('new', 1000, WINDOW)).toBeUndefined();
    call('new', 1000);
    clock += WINDOW;
    expect(limiter.countLocally('new', 1000, WINDOW)).toBeUndefined();
  });
});

describe('while another connection holds the write lock', () => {
  let locker: BetterSqlite3.Database;
  beforeEach(() => {
    locker = openDatabase(t.path);
    t.db.pragma('busy_timeout = 0');
  });
  afterEach(() => {
    if (locker.inTransaction) locker.exec('ROLLBACK');
    locker.close();
  });

  it('decides on its own estimate, without waiting, and adds those calls once the lock is gone', () => {
    consume('locked', 5);
    locker.exec('BEGIN IMMEDIATE');
    const during = [consume('locked', 5), consume('locked', 5), consume('locked', 5)];
    expect(during.map((decision) => decision.remaining)).toEqual([3, 2, 1]);
    expect(shared('locked')).toBe(1);
    locker.exec('ROLLBACK');
    clock += 250;
    expect(consume('locked', 5).remaining).toBe(0);
    expect(shared('locked')).toBe(5);
    expect(consume('locked', 5).allowed).toBe(false);
  });
});
