// The SQLite schema (db/schema.ts) and the PostgreSQL schema (db/postgres/schema.ts) must describe
// the same database: one store code base serves from either. db/postgres/schema.ts derives every
// table from db/schema.ts, so the one difference a change can make is a table left out of its
// exports; any other means the derivation is wrong. This compares the two as drizzle reads them
// (getTableConfig), independently of the derivation, and names every difference.
//   npm run check:schema   exit 1 listing the differences; test/store/postgres/schemaParity.test.ts runs the same check.
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getTableColumns, getTableName, is, SQL, type Column, type Table } from 'drizzle-orm';
import { getTableConfig as getPgTableConfig, PgTable } from 'drizzle-orm/pg-core';
import { getTableConfig as getSqliteTableConfig, SQLiteTable } from 'drizzle-orm/sqlite-core';
import * as postgresSchema from '../db/postgres/schema.js';
import * as sqliteSchema from '../db/schema.js';

const sqliteFile = 'db/schema.ts';
const postgresFile = 'db/postgres/schema.ts';

/** A table as both engines can describe it, in engine-neutral terms. */
interface TableShape {
  /** SQL column name → its shape. */
  columns: Map<string, { property: string; type: string; notNull: boolean; defaultValue: string | undefined }>;
  primaryKey: string;
  /** Index name → `unique (a, b) where …`. */
  indexes: Map<string, string>;
  /** `(a, b) → table (c, d) on delete x`. */
  foreignKeys: Set<string>;
  checks: Set<string>;
}

/** What each engine's column type must be in the other: SQLite's INTEGER is 64-bit, hence bigint. */
const typeInPostgres: Record<string, string> = { SQLiteText: 'PgText', SQLiteInteger: 'PgBigInt53', SQLiteBoolean: 'PgBoolean' };
const postgresDeclaration: Record<string, (name: string) => string> = {
  SQLiteText: (name) => `text('${name}')`,
  SQLiteInteger: (name) => `bigint('${name}', { mode: 'number' })`,
  SQLiteBoolean: (name) => `boolean('${name}')`,
};

function tablesOf(schema: Record<string, unknown>): Map<string, Table> {
  const tables = new Map<string, Table>();
  for (const value of Object.values(schema)) {
    if (is(value, SQLiteTable) || is(value, PgTable)) tables.set(getTableName(value), value);
  }
  return tables;
}

function indexedColumns(columns: readonly unknown[]): string {
  return columns.map((column) => (is(column, SQL) ? '<expression>' : (column as { name: string }).name)).join(', ');
}

function columnShapes(table: Table): TableShape['columns'] {
  const shapes: TableShape['columns'] = new Map();
  for (const [property, column] of Object.entries(getTableColumns(table)) as [string, Column][]) {
    const defaultValue = column.hasDefault ? JSON.stringify(column.default) : undefined;
    shapes.set(column.name, { property, type: column.columnType, notNull: column.notNull, defaultValue });
  }
  return shapes;
}

function sqliteShape(table: SQLiteTable): TableShape {
  const config = getSqliteTableConfig(table);
  const primary = config.primaryKeys[0]?.columns.map((column) => column.name) ?? config.columns.filter((column) => column.primary).map((column) => column.name);
  return {
    columns: columnShapes(table),
    primaryKey: primary.join(', '),
    indexes: new Map(
      config.indexes.map(({ config: index }) => [index.name, `${index.unique ? 'unique ' : ''}(${indexedColumns(index.columns)})${index.where ? ' where …' : ''}`]),
    ),
    foreignKeys: new Set(config.foreignKeys.map((foreignKey) => describeForeignKey(foreignKey.reference(), foreignKey.onDelete))),
    checks: new Set(config.checks.map((check) => check.name)),
  };
}

function postgresShape(table: PgTable): TableShape {
  const config = getPgTableConfig(table);
  const primary = config.primaryKeys[0]?.columns.map((column) => column.name) ?? config.columns.filter((column) => column.primary).map((column) => column.name);
  const indexes = new Map(
    config.indexes.map(({ config: index }) => [index.name!, `${index.unique ? 'unique ' : ''}(${indexedColumns(index.columns)})${index.where ? ' where …' : ''}`]),
  );
  // A unique constraint is SQLite's unique index of the same name (PostgreSQL backs it with one).
  for (const constraint of config.uniqueConstraints) indexes.set(constraint.getName()!, `unique (${indexedColumns(constraint.columns)})`);
  return {
    columns: columnShapes(table),
    primaryKey: primary.join(', '),
    indexes,
    foreignKeys: new Set(config.foreignKeys.map((foreignKey) => describeForeignKey(foreignKey.reference(), foreignKey.onDelete))),
    checks: new Set(config.checks.map((check) => check.name)),
  };
}

function describeForeignKey(reference: { columns: { name: string }[]; foreignColumns: { name: string }[]; foreignTable: Table }, onDelete: string | undefined): string {
  const names = (columns: { name: string }[]) => columns.map((column) => column.name).join(', ');
  return `(${names(reference.columns)}) → ${getTableName(reference.foreignTable)} (${names(reference.foreignColumns)}) on delete ${onDelete ?? 'no action'}`;
}

/** Every difference between the two schemas, each saying what to add or change in which file; empty when they agree. */
export function schemaDifferences(sqlite: Record<string, unknown> = sqliteSchema, postgres: Record<string, unknown> = postgresSchema): string[] {
  const differences: string[] = [];
  const sqliteTables = tablesOf(sqlite);
  const postgresTables = tablesOf(postgres);
  for (const name of sqliteTables.keys()) {
    if (!postgresTables.has(name)) differences.push(`Table ${name} is in ${sqliteFile} but not in ${postgresFile}: add it to the tables that file exports and run npm run db:generate.`);
  }
  for (const name of postgresTables.keys()) {
    if (!sqliteTables.has(name)) differences.push(`Table ${name} is in ${postgresFile} but not in ${sqliteFile}: define it in ${sqliteFile}, from which ${postgresFile} derives its tables, and run npm run db:generate.`);
  }
  for (const [name, sqliteTable] of sqliteTables) {
    const postgresTable = postgresTables.get(name);
    if (!postgresTable) continue;
    differences.push(...tableDifferences(name, sqliteShape(sqliteTable as SQLiteTable), postgresShape(postgresTable as PgTable)));
  }
  return differences;
}

function tableDifferences(table: string, sqlite: TableShape, postgres: TableShape): string[] {
  const differences: string[] = [];
  for (const [column, shape] of sqlite.columns) {
    const twin = postgres.columns.get(column);
    const declaration = postgresDeclaration[shape.type]?.(column) ?? `<a column like ${shape.type}>`;
    if (!twin) {
      differences.push(`Column ${table}.${column} is in ${sqliteFile} but not in ${postgresFile}: add ${shape.property}: ${declaration}${shape.notNull ? '.notNull()' : ''} to its ${table} table.`);
      continue;
    }
    if (twin.property !== shape.property) differences.push(`Column ${table}.${column} is ${shape.property} in ${sqliteFile} but ${twin.property} in ${postgresFile}: use one property name.`);
    if (typeInPostgres[shape.type] !== twin.type) differences.push(`Column ${table}.${column} is ${shape.type} in ${sqliteFile}, so ${postgresFile} must declare it ${declaration}, not ${twin.type}.`);
    if (twin.notNull !== shape.notNull) differences.push(`Column ${table}.${column} is ${shape.notNull ? 'NOT NULL' : 'nullable'} in ${sqliteFile} but ${twin.notNull ? 'NOT NULL' : 'nullable'} in ${postgresFile}.`);
    if (twin.defaultValue !== shape.defaultValue) differences.push(`Column ${table}.${column} defaults to ${shape.defaultValue ?? 'nothing'} in ${sqliteFile} but to ${twin.defaultValue ?? 'nothing'} in ${postgresFile}.`);
  }
  for (const [column, shape] of postgres.columns) {
    if (!sqlite.columns.has(column)) differences.push(`Column ${table}.${column} is in ${postgresFile} but not in ${sqliteFile}: add ${shape.property} to its ${table} table there.`);
  }
  if (sqlite.primaryKey !== postgres.primaryKey) differences.push(`Table ${table} has the primary key (${sqlite.primaryKey}) in ${sqliteFile} but (${postgres.primaryKey}) in ${postgresFile}.`);
  for (const [name, shape] of sqlite.indexes) {
    const twin = postgres.indexes.get(name);
    if (twin === undefined) differences.push(`Index ${name} ${shape} on ${table} is in ${sqliteFile} but not in ${postgresFile}: add it there${shape.startsWith('unique') ? " as unique('" + name + "')" : ''}.`);
    else if (twin !== shape) differences.push(`Index ${name} on ${table} is ${shape} in ${sqliteFile} but ${twin} in ${postgresFile}.`);
  }
  for (const [name, shape] of postgres.indexes) {
    if (!sqlite.indexes.has(name)) differences.push(`Index ${name} ${shape} on ${table} is in ${postgresFile} but not in ${sqliteFile}: add it there.`);
  }
  for (const foreignKey of sqlite.foreignKeys) {
    if (!postgres.foreignKeys.has(foreignKey)) differences.push(`Foreign key ${table} ${foreignKey} is in ${sqliteFile} but not in ${postgresFile}: add it there.`);
  }
  for (const foreignKey of postgres.foreignKeys) {
    if (!sqlite.foreignKeys.has(foreignKey)) differences.push(`Foreign key ${table} ${foreignKey} is in ${postgresFile} but not in ${sqliteFile}: add it there.`);
  }
  for (const check of sqlite.checks) {
    if (!postgres.checks.has(check)) differences.push(`CHECK constraint ${check} of ${table} is in ${sqliteFile} but not in ${postgresFile}: add it there.`);
  }
  for (const check of postgres.checks) {
    if (!sqlite.checks.has(check)) differences.push(`CHECK constraint ${check} of ${table} is in ${postgresFile} but not in ${sqliteFile}: add it there.`);
  }
  return differences;
}

const invokedDirectly = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  const differences = schemaDifferences();
  if (differences.length > 0) {
    process.stderr.write(`The SQLite and PostgreSQL schemas differ (${differences.length}):\n${differences.map((line) => `  - ${line}`).join('\n')}\n`);
    process.exitCode = 1;
  } else {
    process.stdout.write(`${sqliteFile} and ${postgresFile} describe the same tables, columns, keys, indexes and checks.\n`);
  }
}
