// Keyset ("seek") pagination shared by the list operations: rows ordered by (sort key, id), both
// in the requested direction, and the next page starts strictly after the last row's pair. No
// OFFSET, so a page costs the same wherever it is, and inserts or deletes elsewhere never make a
// row appear twice or be skipped. Each sort key has an index (workspace_id, key, id).
import { and, asc, desc, sql, type SQL } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import { StoreError } from './errors.js';

export const sortOrders = ['asc', 'desc'] as const;
export type SortOrder = (typeof sortOrders)[number];

/** Where the next page starts: the last row's sort key (as stored and compared) and its id. */
export interface KeysetAfter {
  key: string | number;
  id: string;
}

export interface KeysetPage<T> {
  items: T[];
  /** Null on the last page. */
  nextAfter: KeysetAfter | null;
  /** For a page shown as of the instant it was read: the first instant from which it may read otherwise, though nothing is written. */
  shownUntil?: number;
}

export interface KeysetListOptions<S extends string> {
  sort: S;
  order: SortOrder;
  /** Rows per page; the API allows 1 to 100. */
  limit: number;
  after?: KeysetAfter | null;
}

export interface SortKeyDefinition {
  /** The column, or an expression that an index is built on (spelled exactly as in the index). */
  expression: SQLiteColumn | SQL;
  keyType: 'number' | 'string';
  /**
   * SQLite seeks an expression index for `expr >= ?` but not for a row value `(expr, id) > (?, ?)`;
   * repeating the bound alone lets it start at the right place instead of filtering from the start.
   */
  seekBound?: boolean;
}

/** The largest page the store serves; the contract's own maximum is lower. */
export const maximumPageSize = 1000;

export function checkListOptions<S extends string>(options: KeysetListOptions<S>, sortKeys: Record<S, SortKeyDefinition>): SortKeyDefinition {
  const definition = Object.hasOwn(sortKeys, options.sort) ? sortKeys[options.sort] : undefined;
  if (!definition) throw new StoreError('invalid_argument', `Unknown sort "${String(options.sort)}"; use one of ${Object.keys(sortKeys).join(', ')}.`);
  if (!(sortOrders as readonly string[]).includes(options.order)) throw new StoreError('invalid_argument', `Unknown order "${String(options.order)}".`);
  if (!Number.isSafeInteger(options.limit) || options.limit < 1 || options.limit > maximumPageSize) {
    throw new StoreError('invalid_argument', `limit must be a whole number from 1 to ${maximumPageSize}.`);
  }
  const after = options.after;
  if (after !== undefined && after !== null) {
    const keyOk = definition.keyType === 'number' ? Number.isSafeInteger(after.key) : typeof after.key === 'string';
    if (!keyOk || typeof after.id !== 'string') {
      throw new StoreError('invalid_argument', `The page position does not fit sort "${options.sort}".`);
    }
  }
  return definition;
}

/** `(key, id) > (:afterKey, :afterId)` ascending, `<` descending. */
export function keysetCondition(definition: SortKeyDefinition, idColumn: SQLiteColumn, order: SortOrder): SQL {
  const afterKey = sql.placeholder('afterKey');
  const afterId = sql.placeholder('afterId');
  const rowValue =
    order === 'asc'
      ? sql`(${definition.expression}, ${idColumn}) > (${afterKey}, ${afterId})`
      : sql`(${definition.expression}, ${idColumn}) < (${afterKey}, ${afterId})`;
  if (!definition.seekBound) return rowValue;
  const bound = order === 'asc' ? sql`${definition.expression} >= ${afterKey}` : sql`${definition.expression} <= ${afterKey}`;
  return and(bound, rowValue)!;
}

export function keysetOrderBy(definition: SortKeyDefinition, idColumn: SQLiteColumn, order: SortOrder): SQL[] {
  const direction = order === 'asc' ? asc : desc;
  return [direction(definition.expression), direction(idColumn)];
}

/** A row of a list statement as SQLite gives it: the id, the sort key, then the listed columns. */
export type KeysetRow = readonly [id: string, sortKey: string | number, ...columns: unknown[]];

/** Turns `limit + 1` fetched rows into a page: the extra row only says that there is a next page. */
export function toPage<R extends { id: string; sortKey: string | number }, T>(rows: R[], limit: number, toItem: (row: R) => T): KeysetPage<T> {
  const pageRows = rows.slice(0, limit);
  const last = pageRows.at(-1);
  return {
    items: pageRows.map(toItem),
    nextAfter: rows.length > limit && last ? { key: last.sortKey, id: last.id } : null,
  };
}

/** toPage for the array rows of engineKeysetList; `at` is passed on to toItem (the instant the items are shown at). */
export function toPageOfKeysetRows<R extends KeysetRow, T>(rows: R[], limit: number, toItem: (row: R, at: number) => T, at = 0): KeysetPage<T> {
  const count = Math.min(rows.length, limit);
  const items = new Array<T>(count);
  for (let index = 0; index < count; index += 1) items[index] = toItem(rows[index]!, at);
  const last = rows[count - 1];
  return {
    items,
    nextAfter: rows.length > limit && last ? { key: last[1], id: last[0] } : null,
  };
}

/** What a list statement's placeholders are filled from. */
export interface KeysetListArguments {
  workspaceId: string;
  /** Rows to fetch: the page size plus one. */
  limit: number;
  afterKey?: string | number;
  afterId?: string;
}

/** Prepared list statements, one per (sort, order, first page or not), each made on first use. */
export function statementCache<T>(): (cacheKey: string, prepare: () => T) => T {
  const cache = new Map<string, T>();
  return (cacheKey, prepare) => {
    let statement = cache.get(cacheKey);
    if (statement === undefined) {
      statement = prepare();
      cache.set(cacheKey, statement);
    }
    return statement;
  };
}
