// The date range and buckets of the /v1/analytics operations: `from` (inclusive) and `to`
// (exclusive) are UTC days, buckets are UTC calendar days, ISO weeks (Monday to Monday) or
// calendar months, cut to the range at both ends. At most MAX_BUCKETS per request.
import { bucketKey, type AnalyticsRange, type BucketKey, type BucketSize } from '../store/analytics.js';
import { ApiProblem } from './problems.js';

export const MAX_BUCKETS = 366;

const DAY_MS = 86_400_000;

export interface Bucket {
  /** YYYY-MM-DD, inclusive. */
  start: string;
  /** YYYY-MM-DD, exclusive. */
  end: string;
  key: BucketKey;
}

export interface BucketedRange extends AnalyticsRange {
  buckets: Bucket[];
  /** The members every analytics answer opens with: the days as asked and the bucket size taken. */
  answered: { from: string; to: string; bucket: BucketSize };
}

/** The start of the calendar bucket after the one holding `at` (a UTC midnight). */
function nextBoundary(size: BucketSize, at: number): number {
  const date = new Date(at);
  switch (size) {
    case 'day':
      return at + DAY_MS;
    case 'week':
      // getUTCDay(): 0 is Sunday; days to the next Monday.
      return at + (((8 - date.getUTCDay()) % 7 || 7) * DAY_MS);
    case 'month':
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
  }
}

/** How many buckets [from, to) spans, without listing them. */
function bucketCount(size: BucketSize, from: number, to: number): number {
  const last = to - 1;
  switch (size) {
    case 'day':
    case 'week':
      return (bucketKey(size, last) as number) - (bucketKey(size, from) as number) + 1;
    case 'month': {
      const first = new Date(from);
      const end = new Date(last);
      return (end.getUTCFullYear() - first.getUTCFullYear()) * 12 + end.getUTCMonth() - first.getUTCMonth() + 1;
    }
  }
}

const day = (at: number) => new Date(at).toISOString().slice(0, 10);

function refused(code: 'invalid-date-range' | 'too-many-buckets', path: string, issue: 'too_small' | 'too_big', message: string): ApiProblem {
  return new ApiProblem('validation', { code, detail: `${path.slice(1)} ${message}.`, extensions: { errors: [{ path, code: issue, message }] } });
}

/**
 * The range the query asks for, with its buckets; 422 `invalid-date-range` when `to` is not after
 * `from` or `from` is before 1970, 422 `too-many-buckets` beyond MAX_BUCKETS. The contract has
 * checked that both are calendar dates.
 */
export function bucketedRange(workspaceId: string, query: { from: string; to: string; bucket?: BucketSize }): BucketedRange {
  const size = query.bucket ?? 'day';
  const from = Date.parse(`${query.from}T00:00:00Z`);
  const to = Date.parse(`${query.to}T00:00:00Z`);
  if (from < 0) throw refused('invalid-date-range', '?from', 'too_small', 'must be 1970-01-01 or later');
  if (to <= from) throw refused('invalid-date-range', '?to', 'too_small', `must be after from (${query.from})`);
  const count = bucketCount(size, from, to);
  if (count > MAX_BUCKETS) {
    throw refused('too-many-buckets', '?to', 'too_big', `makes ${count} ${size} buckets from ${query.from}; at most ${MAX_BUCKETS} are answered at once: narrow the range or take a larger bucket`);
  }
  const buckets: Bucket[] = [];
  for (let start = from; start < to; ) {
    const end = Math.min(nextBoundary(size, start), to);
    buckets.push({ start: day(start), end: day(end), key: bucketKey(size, start) });
    start = end;
  }
  return { workspaceId, from, to, bucket: size, buckets, answered: { from: query.from, to: query.to, bucket: size } };
}
