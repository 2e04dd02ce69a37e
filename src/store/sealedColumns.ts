// Every column that holds values sealed with the sealing key ring (src/auth/secretBox.ts), read
// in batches and rewritten one batch per transaction: what `admin keys reseal` and `admin keys
// retire` work through. A new sealed column is added here, or reseal leaves it behind.
import { and, asc, eq, getTableColumns, gt, isNotNull, not, like, or, sql, type SQL } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import { connectors, idempotencyKeys, webhookSubscriptions } from '../../db/schema.js';
import { engineOf, type StoreSource } from './engine.js';

/** A sealed column: `webhook_subscriptions.sealed_secret` and the like. */
export type SealedColumnName =
  | 'webhook_subscriptions.sealed_secret'
  | 'webhook_subscriptions.sealed_previous_secret'
  | 'connectors.sealed_credential'
  | 'idempotency_keys.body';

/** One sealed value and the row it is in: `recordKey` is the row's key, as its context is made from it. */
export interface SealedValue {
  column: SealedColumnName;
  /** The row's primary key: [id], or [workspace id, key] for idempotency keys. */
  recordKey: string[];
  sealed: string;
}

interface ColumnDefinition {
  name: SealedColumnName;
  keys: SQLiteColumn[];
  value: SQLiteColumn;
  /** Rows of the column that hold a sealed value (an idempotent answer stored before sealing is plain JSON). */
  holdsSealed: SQL;
}

const definitions: ColumnDefinition[] = [
  { name: 'webhook_subscriptions.sealed_secret', keys: [webhookSubscriptions.id], value: webhookSubscriptions.sealedSecret, holdsSealed: sql`1 = 1` },
  {
    name: 'webhook_subscriptions.sealed_previous_secret',
    keys: [webhookSubscriptions.id],
    value: webhookSubscriptions.sealedPreviousSecret,
    holdsSealed: isNotNull(webhookSubscriptions.sealedPreviousSecret),
  },
  { name: 'connectors.sealed_credential', keys: [connectors.id], value: connectors.sealedCredential, holdsSealed: isNotNull(connectors.sealedCredential) },
  {
    name: 'idempotency_keys.body',
    keys: [idempotencyKeys.workspaceId, idempotencyKeys.key],
    value: idempotencyKeys.body,
    holdsSealed: not(like(idempotencyKeys.body, '{%')),
  },
];

export const sealedColumnNames = definitions.map((definition) => definition.name);

export interface SealedColumnStore {
  /**
   * Up to `limit` sealed values of the column whose row key comes after `after` (in key order),
   * leaving out those that start with `skipPrefix` (when given: those already sealed with the newest key).
   */
  batch(column: SealedColumnName, after: string[] | undefined, limit: number, skipPrefix?: string): Promise<SealedValue[]>;
  /** Replaces a sealed value when the row still holds `expected` (a change made meanwhile is kept); answers whether it did. */
  replace(value: SealedValue, resealed: string): Promise<boolean>;
  /** Runs `change` in one write transaction. */
  write<T>(change: () => Promise<T>): Promise<T>;
}

/** A keyset condition: the row's key comes after `after`, for keys of one or two columns. */
function after(keys: SQLiteColumn[], values: string[]): SQL {
  const [first, second] = keys as [SQLiteColumn, SQLiteColumn | undefined];
  if (!second) return gt(first, values[0]!);
  return or(gt(first, values[0]!), and(eq(first, values[0]!), gt(second, values[1]!)))!;
}

export function createSealedColumnStore(source: StoreSource): SealedColumnStore {
  const engine = engineOf(source);
  const { orm } = engine;
  const byName = new Map(definitions.map((definition) => [definition.name, definition]));
  const definitionOf = (name: SealedColumnName) => byName.get(name)!;
  return {
    async batch(column, afterKey, limit, skipPrefix) {
      const definition = definitionOf(column);
      const selection = Object.fromEntries([...definition.keys.map((key, index) => [`k${index}`, key]), ['sealed', definition.value]]);
      const conditions = [definition.holdsSealed];
      if (skipPrefix) conditions.push(sql`substr(${definition.value}, 1, ${skipPrefix.length}) <> ${skipPrefix}`);
      if (afterKey) conditions.push(after(definition.keys, afterKey));
      const query = orm
        .select(selection)
        .from(definition.keys[0]!.table)
        .where(and(...conditions))
        .orderBy(...definition.keys.map((key) => asc(key)))
        .limit(limit);
      const rows = await engine.statement<Record<string, string>>(query).objects({});
      return rows.map((row) => ({ column, recordKey: definition.keys.map((_, index) => row[`k${index}`]!), sealed: row.sealed! }));
    },
    async replace(value, resealed) {
      const definition = definitionOf(value.column);
      const query = orm
        .update(definition.keys[0]!.table)
        .set({ [columnProperty(definition.value)]: resealed })
        .where(and(...definition.keys.map((key, index) => eq(key, value.recordKey[index]!)), eq(definition.value, value.sealed)));
      return (await engine.statement(query).run({})) === 1;
    },
    write: (change) => engine.write(change),
  };
}

/** The property name drizzle knows a column by in its table (sealedSecret for sealed_secret). */
function columnProperty(column: SQLiteColumn): string {
  const columns = getTableColumns(column.table) as Record<string, unknown>;
  return Object.keys(columns).find((property) => columns[property] === column)!;
}
