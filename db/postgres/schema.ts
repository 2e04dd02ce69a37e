// Drizzle schema of the server's PostgreSQL database, derived when it is imported from db/schema.ts
// (SQLite): a table, column, key, index or CHECK constraint is written once, there. Both engines
// get the same property and SQL names, keys, indexes and constraint names, so that one store code
// base serves from either. `npm run db:generate` turns changes into SQL migrations under
// db/postgres/migrations/; `npm run check:schema` still compares the two as drizzle reads them, and
// fails if a table is missing from the list of exports below. What the derivation changes:
// - SQLite's INTEGER is 64-bit: every integer column is `bigint` read as a JavaScript number, so
//   timestamps (epoch milliseconds), revisions and amounts hold the same values in both engines;
//   `{ mode: 'boolean' }` integers are `boolean`.
// - SQLite's unique indexes are unique constraints (same names; PostgreSQL backs each with a unique
//   index of that name): composite foreign keys name them as targets, and drizzle-kit adds foreign
//   keys after the tables and their constraints but before any index.
// - PostgreSQL wants an expression among an index's columns in parentheses.
// - The triggers that raise revisions are PL/pgSQL (migration 0001_revision_triggers.sql).
import { Column, getTableColumns, getTableName, is, sql, SQL, type Table, type ColumnBaseConfig, type ColumnDataType } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  foreignKey,
  index,
  pgTable,
  primaryKey,
  text,
  unique,
  uniqueIndex,
  type PgColumn,
  type PgColumnBuilder,
  type PgTableExtraConfigValue,
  type PgTableWithColumns,
} from 'drizzle-orm/pg-core';
import { getTableConfig, SQLiteTable } from 'drizzle-orm/sqlite-core';
import * as sqliteSchema from '../schema.js';

/** Each SQLite column type's PostgreSQL twin: its drizzle builder, and the column and driver types it gives. */
const postgresColumnTypes = {
  SQLiteText: (column: Column) => text(column.name, { enum: column.enumValues as [string, ...string[]] | undefined }),
  SQLiteInteger: (column: Column) => bigint(column.name, { mode: 'number' }),
  SQLiteBoolean: (column: Column) => boolean(column.name),
};
interface PostgresColumnType {
  SQLiteText: { columnType: 'PgText'; driverParam: string };
  SQLiteInteger: { columnType: 'PgBigInt53'; driverParam: number | string };
  SQLiteBoolean: { columnType: 'PgBoolean'; driverParam: boolean };
}

type PostgresColumn<T extends ColumnBaseConfig<ColumnDataType, string>> = PgColumn<{
  name: T['name'];
  tableName: T['tableName'];
  dataType: T['dataType'];
  columnType: T['columnType'] extends keyof PostgresColumnType ? PostgresColumnType[T['columnType']]['columnType'] : never;
  data: T['data'];
  driverParam: T['columnType'] extends keyof PostgresColumnType ? PostgresColumnType[T['columnType']]['driverParam'] : never;
  notNull: T['notNull'];
  hasDefault: T['hasDefault'];
  isPrimaryKey: T['isPrimaryKey'];
  isAutoincrement: false;
  hasRuntimeDefault: T['hasRuntimeDefault'];
  enumValues: T['enumValues'];
  baseColumn: never;
  identity: undefined;
  generated: undefined;
}>;

type PostgresTable<T extends SQLiteTable> = PgTableWithColumns<{
  name: T['_']['name'];
  schema: undefined;
  columns: { [Key in keyof T['_']['columns']]: PostgresColumn<T['_']['columns'][Key]['_']> };
  dialect: 'pg';
}>;

type SqliteSchema = typeof sqliteSchema;
type PostgresTables = { [Name in keyof SqliteSchema as SqliteSchema[Name] extends SQLiteTable ? Name : never]: SqliteSchema[Name] extends SQLiteTable ? PostgresTable<SqliteSchema[Name]> : never };

/** Each derived table's columns by property name, and each SQLite column's property name. */
const postgresColumnsOf = new Map<Table, Record<string, PgColumn>>();
const propertyOf = new Map<Column, string>();

/** While a table's indexes and constraints are built: the table, and the columns drizzle hands that builder (its index builder wants those). */
interface OwnColumns {
  sqliteTable: SQLiteTable;
  columns: Record<string, PgColumn>;
}

function twinColumn(sqlite: Column, own?: OwnColumns): PgColumn {
  const columns = own !== undefined && sqlite.table === own.sqliteTable ? own.columns : postgresColumnsOf.get(sqlite.table);
  const twin = columns?.[propertyOf.get(sqlite) ?? ''];
  if (twin === undefined) throw new Error(`db/postgres/schema.ts has no twin of the SQLite column ${sqlite.name}`);
  return twin;
}

/** The same SQL with every SQLite column in it replaced by its PostgreSQL twin. */
function postgresSql(sqlite: SQL, own?: OwnColumns): SQL {
  return new SQL(sqlite.queryChunks.map((chunk) => (is(chunk, SQL) ? postgresSql(chunk, own) : is(chunk, Column) ? twinColumn(chunk, own) : chunk)));
}

function postgresColumn(column: Column): PgColumnBuilder<ColumnBaseConfig<ColumnDataType, string>> {
  const build = postgresColumnTypes[column.columnType as keyof typeof postgresColumnTypes];
  if (build === undefined || column.defaultFn !== undefined || column.onUpdateFn !== undefined || column.generated !== undefined || column.isUnique) {
    throw new Error(`db/postgres/schema.ts cannot derive ${column.columnType} column ${column.name}: teach it the column's PostgreSQL form.`);
  }
  const builder = build(column) as PgColumnBuilder<ColumnBaseConfig<ColumnDataType, string>>;
  if (column.primary) builder.primaryKey();
  if (column.notNull) builder.notNull();
  if (column.hasDefault) builder.default(is(column.default, SQL) ? postgresSql(column.default) : column.default);
  return builder;
}

/** A SQLite table's keys, indexes and constraints, spelled for PostgreSQL. */
function postgresExtraConfig(own: OwnColumns): PgTableExtraConfigValue[] {
  const config = getTableConfig(own.sqliteTable);
  const columns = (sqlite: Column[]) => sqlite.map((column) => twinColumn(column, own)) as [PgColumn, ...PgColumn[]];
  const indexed = (sqlite: (Column | SQL)[]) => sqlite.map((part) => (is(part, SQL) ? sql`(${postgresSql(part, own)})` : twinColumn(part, own)));
  return [
    ...config.primaryKeys.map((key) => primaryKey({ columns: columns(key.columns) })),
    ...config.foreignKeys.map((sqliteKey) => {
      const reference = sqliteKey.reference();
      const postgresKey = foreignKey({ name: reference.name, columns: columns(reference.columns), foreignColumns: columns(reference.foreignColumns) });
      if (sqliteKey.onDelete !== undefined) postgresKey.onDelete(sqliteKey.onDelete);
      if (sqliteKey.onUpdate !== undefined) postgresKey.onUpdate(sqliteKey.onUpdate);
      return postgresKey;
    }),
    ...config.indexes.map(({ config: sqliteIndex }) => {
      const [first, ...rest] = indexed(sqliteIndex.columns as (Column | SQL)[]);
      if (sqliteIndex.unique && sqliteIndex.where === undefined && [first, ...rest].every((part) => !is(part, SQL))) {
        return unique(sqliteIndex.name).on(first as PgColumn, ...(rest as PgColumn[]));
      }
      const postgresIndex = (sqliteIndex.unique ? uniqueIndex : index)(sqliteIndex.name).on(first!, ...rest);
      return sqliteIndex.where === undefined ? postgresIndex : postgresIndex.where(postgresSql(sqliteIndex.where, own));
    }),
    ...config.checks.map((sqliteCheck) => check(sqliteCheck.name, postgresSql(sqliteCheck.value, own))),
  ];
}

function postgresTables(sqlite: SqliteSchema): PostgresTables {
  const tables: Record<string, Table> = {};
  for (const [exportName, sqliteTable] of Object.entries(sqlite)) {
    if (!is(sqliteTable, SQLiteTable)) continue;
    const sqliteColumns = Object.entries(getTableColumns(sqliteTable));
    for (const [property, column] of sqliteColumns) propertyOf.set(column, property);
    const builders = Object.fromEntries(sqliteColumns.map(([property, column]) => [property, postgresColumn(column)]));
    const postgresTable = pgTable(getTableName(sqliteTable), builders, (columns) => postgresExtraConfig({ sqliteTable, columns }));
    postgresColumnsOf.set(sqliteTable, getTableColumns(postgresTable));
    tables[exportName] = postgresTable;
  }
  return tables as unknown as PostgresTables;
}

// drizzle-kit finds the tables among this module's named exports.
export const {
  tenants,
  apiKeys,
  rateLimitCounters,
  portfolios,
  assets,
  portfolioItems,
  workspaces,
  users,
  personalAccessTokens,
  projects,
  tasks,
  companies,
  contacts,
  deals,
  dealContacts,
  contracts,
  connectors,
  importedIssues,
  events,
  idempotencyKeys,
  quotaCounters,
  webhookSubscriptions,
  webhookDeliveries,
  webhookAttempts,
  collectionRevisions,
  aiSpendEntries,
  idempotencyClaims,
  oauthClients,
  oauthRecords,
} = postgresTables(sqliteSchema);
