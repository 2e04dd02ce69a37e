import { describe, expect, it } from 'vitest';
import { formatTimestamp } from '../../src/store/workPlatformValues.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** Compares every value and reports the first few that differ, so that a failure names them. */
function differences(values: Iterable<number>): Array<{ ms: number; expected: string; actual: string }> {
  const found: Array<{ ms: number; expected: string; actual: string }> = [];
  for (const ms of values) {
    const expected = iso(ms);
    const actual = formatTimestamp(ms);
    if (actual !== expected && found.push({ ms, expected, actual }) >= 5) break;
  }
  return found;
}

function* yearBoundaries(): Generator<number> {
  for (let year = 1970; year <= 9999; year += 1) {
    const start = Date.UTC(year, 0, 1);
    yield start, start + 1, start + 999, start + 1000;
    if (year > 1970) yield start - 1, start - 1000, start - 999;
    const marchFirst = Date.UTC(year, 2, 1);
    yield marchFirst - 1, marchFirst, Date.UTC(year, 1, 28, 23, 59, 59, 999);
  }
}

function* monthAndDayBoundaries(fromYear: number, toYear: number): Generator<number> {
  for (let day = Date.UTC(fromYear, 0, 1); day < Date.UTC(toYear, 0, 1); day += 86_400_000) {
    yield day, day + 999, day - 1, day + 43_199_999, day + 86_399_000;
  }
}

function* pseudoRandom(count: number, below: number): Generator<number> {
  let state = 0x2545f491;
  for (let index = 0; index < count; index += 1) {
    // xorshift32, twice: a repeatable spread over the whole range
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    const high = state >>> 0;
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    yield Math.floor(((high * 2 ** 32 + (state >>> 0)) / 2 ** 64) * below);
  }
}

describe('formatTimestamp', () => {
  it('writes what toISOString writes at every year boundary from 1970 to 9999, milliseconds 000 and 999 included', () => {
    expect(differences(yearBoundaries())).toEqual([]);
  });

  it('writes what toISOString writes at every day boundary of 1999 to 2101 (leap years, 2000 and 2100)', () => {
    expect(differences(monthAndDayBoundaries(1999, 2102))).toEqual([]);
  });

  it('writes what toISOString writes for every millisecond of a second and every second of a day', () => {
    const start = Date.UTC(2026, 10, 23);
    const milliseconds = Array.from({ length: 1000 }, (_, ms) => start + 59_000 + ms);
    const seconds = Array.from({ length: 86_400 }, (_, second) => start + second * 1000 + (second % 1000));
    expect(differences([...milliseconds, ...seconds])).toEqual([]);
  });

  it('writes what toISOString writes for a million values spread over 1970 to 9999', () => {
    expect(differences(pseudoRandom(1_000_000, 253_402_300_800_000))).toEqual([]);
  });

  it('leaves values outside its range to toISOString: before 1970, from year 10000, fractions', () => {
    const outside = [-1, -86_400_000, Date.UTC(1969, 11, 31, 23, 59, 59, 999), Date.UTC(1, 0, 1), 253_402_300_799_999, 253_402_300_800_000, 8.64e15, 1.5, 1_763_890_860_000.25];
    expect(differences(outside)).toEqual([]);
    expect(formatTimestamp(253_402_300_799_999)).toBe('9999-12-31T23:59:59.999Z');
    expect(formatTimestamp(253_402_300_800_000)).toBe('+010000-01-01T00:00:00.000Z');
    expect(() => formatTimestamp(Number.NaN)).toThrow(RangeError);
  });

  it('is exact at the epoch and at a known instant', () => {
    expect(formatTimestamp(0)).toBe('1970-01-01T00:00:00.000Z');
    expect(formatTimestamp(Date.UTC(2026, 10, 23, 9, 41, 0, 7))).toBe('2026-11-23T09:41:00.007Z');
  });
});
