// The store's one query style: every statement is written with drizzle's query builder, so each
// table's columns are spelled once, in db/schema.ts. A statement runs either through drizzle's own
// `.prepare()` (rows mapped to objects by the schema), or, on the per-request hot paths, through
// compiledStatement(): the builder's SQL compiled once by better-sqlite3, without drizzle's
// per-call binding and per-row mapping. No hand-written SELECT or INSERT column lists.
import type BetterSqlite3 from 'better-sqlite3';
import { and, eq, getTableColumns, Param, Placeholder, sql, type DriverValueEncoder, type Table } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import type { StoreEngine } from './engine.js';

export type AppDatabase = BetterSQLite3Database;

const instances = new WeakMap<BetterSqlite3.Database, AppDatabase>();

/**
 * The drizzle wrapper of a connection, made once per connection. Without the schema: the stores build every query
 * from the tables themselves and never use relational queries (`db.query`), whose set-up cost about 5 ms per wrapper.
 */
export function drizzleFor(db: BetterSqlite3.Database): AppDatabase {
  let instance = instances.get(db);
  if (!instance) {
    instance = drizzle(db);
    instances.set(db, instance);
  }
  return instance;
}

/** A builder query before it runs: drizzle's select, insert, update and delete all have `toSQL()`. */
export interface BuiltQuery {
  toSQL(): { sql: string; params: unknown[] };
}

/** A statement compiled once; its placeholders are bound by name from one arguments object. */
export interface CompiledStatement<Args, Row> {
  /** Rows as arrays, in the order the query selects its columns (cheapest to read). */
  rows(args: Args): Row[];
  /** The first row as an array, or undefined. */
  row(args: Args): Row | undefined;
  /** The first column of the first row, or undefined. */
  value(args: Args): unknown;
  run(args: Args): BetterSqlite3.RunResult;
}

/**
 * The builder's SQL compiled by better-sqlite3 once. Only `sql.placeholder()` values may be bound,
 * so one statement serves every call; literal values in the builder are refused at start-up. A
 * placeholder given as an insert or update value goes through its column's encoder, as drizzle does.
 */
export function compiledStatement<Args extends object, Row extends readonly unknown[] = unknown[]>(
  db: BetterSqlite3.Database,
  query: BuiltQuery,
): CompiledStatement<Args, Row> {
  const { sql: source, params } = query.toSQL();
  const encoders: (DriverValueEncoder<unknown, unknown> | undefined)[] = [];
  const names = params.map((param) => {
    if (param instanceof Placeholder) {
      encoders.push(undefined);
      return param.name as keyof Args;
    }
    if (param instanceof Param && param.value instanceof Placeholder) {
      encoders.push(param.encoder);
      return param.value.name as keyof Args;
    }
    throw new Error(`a compiled statement binds placeholders only, not ${String(param)}: ${source}`);
  });
  // Prepared on first use, one statement per reading mode (better-sqlite3 sets the mode on the statement).
  let arrays: BetterSqlite3.Statement<unknown[], Row> | undefined;
  let values: BetterSqlite3.Statement<unknown[], unknown> | undefined;
  let writes: BetterSqlite3.Statement<unknown[], unknown> | undefined;
  const bind = encoders.some(Boolean)
    ? (args: Args) => names.map((name, index) => (encoders[index] ? encoders[index].mapToDriverValue(args[name]) : args[name]))
    : (args: Args) => names.map((name) => args[name]);
  return {
    rows: (args) => (arrays ??= db.prepare<unknown[], Row>(source).raw(true)).all(...bind(args)),
    row: (args) => (arrays ??= db.prepare<unknown[], Row>(source).raw(true)).get(...bind(args)),
    value: (args) => (values ??= db.prepare<unknown[], unknown>(source).pluck(true)).get(...bind(args)),
    run: (args) => (writes ??= db.prepare<unknown[], unknown>(source)).run(...bind(args)),
  };
}

/** An insert's values: every column of the table bound from the placeholder of the same name. */
export function placeholdersFor<T extends Table>(table: T): Record<keyof T['$inferInsert'], Placeholder> {
  return Object.fromEntries(Object.keys(getTableColumns(table)).map((name) => [name, sql.placeholder(name)])) as Record<keyof T['$inferInsert'], Placeholder>;
}

/** A table whose rows belong to a workspace and have an id. */
type WorkspaceRows = SQLiteTable & { id: SQLiteColumn; workspaceId: SQLiteColumn };

/**
 * `{ id }` of the row with this id in this workspace, or undefined: what a reference to another
 * record is checked with (a row of another workspace is as missing as one that never was).
 */
export function workspaceRowStatement(engine: StoreEngine, table: WorkspaceRows) {
  return engine.statement<unknown, { workspaceId: string; id: string }>(
    engine.orm
      .select({ id: table.id })
      .from(table)
      .where(and(eq(table.workspaceId, sql.placeholder('workspaceId')), eq(table.id, sql.placeholder('id')))),
  );
}
