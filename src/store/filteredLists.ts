// The lists of the versioned resources: keyset pages (see keysetPages.ts) narrowed by optional filters.
// Each combination of sort, order, page position and given filters is one statement, made on
// first use; a filter is a condition on its own placeholder, so its value is bound, never spliced.
import { and, eq, sql, type SQL } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { AppDatabase, BuiltQuery } from './drizzle.js';
import type { EngineStatement, StoreEngine } from './engine.js';
import {
  checkListOptions,
  keysetCondition,
  keysetOrderBy,
  statementCache,
  toPageOfKeysetRows,
  type KeysetListOptions,
  type KeysetPage,
  type KeysetRow,
  type SortKeyDefinition,
} from './keysetPages.js';

export interface FilteredListDefinition<S extends string, F extends string, R extends KeysetRow, T> {
  table: SQLiteTable;
  idColumn: SQLiteColumn;
  workspaceColumn: SQLiteColumn;
  /** What a list reads after the id and the sort key, in the order of R. */
  columns: Record<string, SQLiteColumn | SQL>;
  sortKeys: Record<S, SortKeyDefinition>;
  /** Each filter's condition, written with `sql.placeholder(<filter name>)`. */
  filters: Record<F, SQL>;
  /** The item of a row, as shown at the instant the list is read at. */
  toItem: (row: R, at: number) => T;
}

export type FilteredListOptions<S extends string, F extends string> = KeysetListOptions<S> &
  Partial<Record<F, string | number>> & {
    /** Further named values that the definition's columns, sort keys or filters bind (a contract list: the instant it is read at). */
    bindings?: Record<string, string | number>;
  };

/** The list query of one (sort, order, page position, given filters): id, sort key, then the definition's columns. */
function filteredListQuery<S extends string, F extends string, R extends KeysetRow, T>(
  orm: AppDatabase,
  definition: FilteredListDefinition<S, F, R, T>,
  sortKey: SortKeyDefinition,
  order: 'asc' | 'desc',
  afterPosition: boolean,
  given: readonly F[],
): BuiltQuery {
  const conditions: SQL[] = [eq(definition.workspaceColumn, sql.placeholder('workspaceId'))];
  for (const name of given) conditions.push(definition.filters[name]);
  if (afterPosition) conditions.push(keysetCondition(sortKey, definition.idColumn, order));
  return orm
    .select({ id: definition.idColumn, sortKey: sql`${sortKey.expression}`, ...definition.columns })
    .from(definition.table)
    .where(and(...conditions))
    .orderBy(...keysetOrderBy(sortKey, definition.idColumn, order))
    .limit(sql.placeholder('limit'));
}

/** Checks the options and picks the statement of their shape; answers it with the arguments to run it with. */
function filteredListCall<S extends string, F extends string, R extends KeysetRow, T, Statement>(
  definition: FilteredListDefinition<S, F, R, T>,
  filterNames: readonly F[],
  statements: (cacheKey: string, prepare: () => Statement) => Statement,
  prepare: (sortKey: SortKeyDefinition, order: 'asc' | 'desc', afterPosition: boolean, given: readonly F[]) => Statement,
  workspaceId: string,
  options: FilteredListOptions<S, F>,
): { statement: Statement; args: Record<string, unknown> } {
  const sortKey = checkListOptions(options, definition.sortKeys);
  const after = options.after ?? null;
  const given = filterNames.length === 0 ? filterNames : filterNames.filter((name) => options[name] !== undefined);
  const statement = statements(`${options.sort}:${options.order}:${after ? 'after' : 'first'}${given.length === 0 ? '' : `:${given.join(',')}`}`, () =>
    prepare(sortKey, options.order, after !== null, given),
  );
  const args: Record<string, unknown> = { workspaceId, limit: options.limit + 1, afterKey: after?.key, afterId: after?.id };
  if (options.bindings) Object.assign(args, options.bindings);
  for (const name of given) args[name] = options[name];
  return { statement, args };
}

/** A filtered keyset list on an engine: each page read as committed data, its items shown as at `at`. */
export function engineFilteredKeysetList<S extends string, F extends string, R extends KeysetRow, T>(
  engine: StoreEngine,
  definition: FilteredListDefinition<S, F, R, T>,
): (workspaceId: string, options: FilteredListOptions<S, F>, at?: number) => Promise<KeysetPage<T>> {
  const statements = statementCache<EngineStatement<Record<string, unknown>, R, unknown>>();
  const filterNames = Object.keys(definition.filters) as F[];
  const prepare = (sortKey: SortKeyDefinition, order: 'asc' | 'desc', afterPosition: boolean, given: readonly F[]) =>
    engine.statement<unknown, Record<string, unknown>, R>(filteredListQuery(engine.orm, definition, sortKey, order, afterPosition, given));

  return async (workspaceId, options, at = 0) => {
    const { statement, args } = filteredListCall(definition, filterNames, statements, prepare, workspaceId, options);
    const rows = await engine.read(() => statement.rows(args));
    return toPageOfKeysetRows(rows, options.limit, definition.toItem, at);
  };
}
