// Checks of values the Work-Platform stores persist, shared by projects and tasks: text against
// its storage limit, timestamps in ISO 8601, and SQLite CHECK failures mapped to typed errors.
import type { AppDatabase } from './drizzle.js';
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

/** RFC 3339 date-time, the `format: date-time` of the contract: date, time and offset all required. */
const rfc3339DateTime = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/i;

/** Milliseconds since the epoch of an RFC 3339 date-time; sub-millisecond digits are dropped. */
export function parseTimestamp(field: string, value: unknown): number {
  const match = typeof value === 'string' ? rfc3339DateTime.exec(value) : null;
  const ms = match ? Date.parse(value as string) : Number.NaN;
  if (!match || Number.isNaN(ms)) throw new InvalidValueError(field, 'must be an ISO 8601 date-time with offset, e.g. 2026-11-23T09:41:00.000Z.');
  const [, year, month, day] = match.map(Number) as [number, number, number, number];
  // Date.parse rolls 2026-02-30 over into March; a calendar date that does not exist is refused.
  if (new Date(Date.UTC(year, month - 1, day)).getUTCDate() !== day || month < 1 || month > 12) {
    throw new InvalidValueError(field, 'is not a calendar date.');
  }
  return ms;
}

/** Rethrows a SQLite CHECK failure on a length constraint as StorageLimitError; anything else as is. */
export function rethrowConstraintFailure(error: unknown, fields: ConstraintFields): never {
  if (error instanceof Error && (error as { code?: unknown }).code === 'SQLITE_CONSTRAINT_CHECK') {
    const name = /CHECK constraint failed: (\w+)/.exec(error.message)?.[1];
    const known = name ? fields[name] : undefined;
    if (known) throw new StorageLimitError(known.field, known.limit, null);
  }
  throw error;
}

/** A writer that runs each write in one immediate transaction, turning CHECK failures into StorageLimitError. */
export function immediateWriter(orm: AppDatabase, fields: ConstraintFields): <T>(fn: () => T) => T {
  return (fn) => {
    try {
      return orm.transaction(fn, { behavior: 'immediate' });
    } catch (error) {
      return rethrowConstraintFailure(error, fields);
    }
  };
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
