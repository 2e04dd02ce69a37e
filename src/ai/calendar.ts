// UTC days: the spend cap counts per UTC day, and relative due dates count from the request's UTC day.

import { utcDayStart } from '../store/workPlatformValues.js';

export const DAY_MS = 86_400_000;

export const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;

/** Midnight UTC at the start of the day `time` falls in. */
export function startOfUtcDay(time: number): number {
  return Math.floor(time / DAY_MS) * DAY_MS;
}

/** `YYYY-MM-DD` of the UTC day `time` falls in. */
export function utcDayOf(time: number): string {
  return new Date(startOfUtcDay(time)).toISOString().slice(0, 10);
}

export function nextUtcMidnight(time: number): number {
  return startOfUtcDay(time) + DAY_MS;
}

/** The last millisecond of the UTC day that starts at `dayStart`, as an ISO 8601 timestamp. */
export function endOfUtcDay(dayStart: number): string {
  return new Date(dayStart + DAY_MS - 1).toISOString();
}

/** Midnight UTC of a `YYYY-MM-DD` date, or undefined when it names no real day. */
export const parseUtcDate = utcDayStart;
