// Checks of values the Work-Platform stores persist, shared by projects and tasks: text against
// its storage limit, timestamps in ISO 8601, and CHECK failures (SQLite's, PostgreSQL's) mapped to typed errors.
import { sql, type SQL } from 'drizzle-orm';
import type { AnyColumn } from 'drizzle-orm';
import type { StoreEngine } from './engine.js';
import { characterCount, InvalidValueError, NotFoundError, StorageLimitError, VersionConflictError, type VersionedEntity } from './workPlatformErrors.js';

/** CHECK constraint name → the API member and limit it enforces. */
export type ConstraintFields = Record<string, { field: string; limit: number }>;

export function checkText(field: string, value: unknown, limit: number, options: { allowEmpty: boolean }): asserts value is string {
  if (typeof value !== 'string') throw new InvalidValueError(field, 'must be a string.');
  // SQLite would store a lone surrogate as U+FFFD and measure text only up to a NUL: refuse both.
  if (!value.isWellFormed() || value.includes('\u0000')) {
    throw new InvalidValueError(field, 'cannot be stored: it holds a NUL character or an unpaired surrogate.');
  }
  const length = characterCount(value);
  if (length > limit) throw new StorageLimitError(field, limit, length);
  if (length === 0 && !options.allowEmpty) throw new InvalidValueError(field, 'must have at least 1 character.');
}

/**
 * Midnight UTC of a `YYYY-MM-DD` day, or undefined when it names no real day. Years 0000–0099 are
 * the years written (Date.UTC would read them as 1900–1999).
 */
export function utcDayStart(text: string): number | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day ? date.getTime() : undefined;
}

/** RFC 3339 date-time, the `format: date-time` of the contract: date, time and offset all required. */
const rfc3339DateTime = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/i;

/** Milliseconds since the epoch of an RFC 3339 date-time; sub-millisecond digits are dropped. */
export function parseTimestamp(field: string, value: unknown): number {
  const match = typeof value === 'string' ? rfc3339DateTime.exec(value) : null;
  const ms = match ? Date.parse(value as string) : Number.NaN;
  if (!match || Number.isNaN(ms)) throw new InvalidValueError(field, 'must be an ISO 8601 date-time with offset, e.g. 2026-11-23T09:41:00.000Z.');
  // Date.parse rolls 2026-02-30 over into March; a calendar date that does not exist is refused.
  if (utcDayStart((value as string).slice(0, 10)) === undefined) throw new InvalidValueError(field, 'is not a calendar date.');
  return ms;
}

const twoDigits = Array.from({ length: 100 }, (_, value) => String(value).padStart(2, '0'));
const threeDigits = Array.from({ length: 1000 }, (_, value) => String(value).padStart(3, '0'));
const msPerDay = 86_400_000;
/** 10000-01-01T00:00:00.000Z: from here on toISOString writes a six-digit year with a sign. */
const firstFiveDigitYear = 253_402_300_800_000;

/**
 * `new Date(ms).toISOString()` without a Date: the list operations format three timestamps per
 * row, and this is several times faster. Years 1970 to 9999 are computed here (the civil-from-days
 * algorithm of Howard Hinnant's date library); anything else goes to toISOString.
 */
export function formatTimestamp(ms: number): string {
  if (!(ms >= 0 && ms < firstFiveDigitYear) || !Number.isInteger(ms)) return new Date(ms).toISOString();
  const days = Math.floor(ms / msPerDay);
  let rest = ms - days * msPerDay;
  const shifted = days + 719_468; // days since 0000-03-01, so that the leap day ends each year
  const era = Math.floor(shifted / 146_097);
  const dayOfEra = shifted - era * 146_097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shiftedMonth = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * shiftedMonth + 2) / 5) + 1;
  const month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const milliseconds = rest % 1000;
  rest = (rest - milliseconds) / 1000;
  const seconds = rest % 60;
  rest = (rest - seconds) / 60;
  const minutes = rest % 60;
  const hours = (rest - minutes) / 60;
  return `${twoDigits[Math.floor(year / 100)]}${twoDigits[year % 100]}-${twoDigits[month]}-${twoDigits[day]}T${twoDigits[hours]}:${twoDigits[minutes]}:${twoDigits[seconds]}.${threeDigits[milliseconds]}Z`;
}

/** Rethrows a CHECK failure (SQLite's, or PostgreSQL's check_violation) on a length constraint as StorageLimitError; anything else as is. */
export function rethrowConstraintFailure(error: unknown, fields: ConstraintFields): never {
  const name = failedCheckConstraint(error);
  const known = name ? fields[name] : undefined;
  if (known) throw new StorageLimitError(known.field, known.limit, null);
  throw error;
}

function failedCheckConstraint(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const { code, constraint } = error as { code?: unknown; constraint?: unknown };
  if (code === 'SQLITE_CONSTRAINT_CHECK') return /CHECK constraint failed: (\w+)/.exec(error.message)?.[1];
  if (code === '23514' && typeof constraint === 'string') return constraint;
  return undefined;
}

/**
 * The asynchronous store's writer: runs a change in one write transaction of the engine (joining
 * the caller's, src/store/engine.ts) and words a failed CHECK constraint as the field it guards.
 */
export function changeWriter(engine: StoreEngine, fields: ConstraintFields): <T>(change: () => T | Promise<T>) => Promise<T> {
  return <T>(change: () => T | Promise<T>): Promise<T> => engine.write(change).catch((error: unknown) => rethrowConstraintFailure(error, fields));
}

/** The row a change applies to: it must exist in the workspace and, when a version is expected, be at it. */
export function versionedRow<R extends { version: number }>(
  entity: VersionedEntity,
  id: string,
  row: R | undefined,
  expectedVersion: number | null,
): R {
  if (!row) throw new NotFoundError(entity, id);
  if (expectedVersion !== null && row.version !== expectedVersion) {
    throw new VersionConflictError(entity, id, expectedVersion, row.version);
  }
  return row;
}

/**
 * The `creatorRemoved` filter of a list: rows whose creator was removed (the placeholder
 * `creatorRemoved` bound to 1) or the rest (0). A number, so that both engines bind it alike.
 */
export function creatorRemovedCondition(creatorRemovedAt: AnyColumn): SQL {
  return sql`(CASE WHEN ${creatorRemovedAt} IS NULL THEN 0 ELSE 1 END) = ${sql.placeholder('creatorRemoved')}`;
}

/** The `creatorRemoved` query value as the placeholder binds it. */
export function creatorRemovedBinding(value: boolean | undefined): 0 | 1 | undefined {
  return value === undefined ? undefined : value ? 1 : 0;
}
