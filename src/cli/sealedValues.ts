// What the admin commands need to know about sealed values (src/store/sealedColumns.ts): the
// context (associated data) each column's values are sealed with, how many each key id sealed,
// and whether a set of keys opens every key id a database uses.
import { CliError } from './cliCommand.js';
import type { SealedColumnName } from '../store/sealedColumns.js';
import type { StoreSource } from '../store/engine.js';
import type { SecretBox } from '../auth/secretBox.js';

// Loaded only when a command runs, so that --help answers at once.
const modules = {
  secretBox: () => import('../auth/secretBox.js'),
  sealedColumns: () => import('../store/sealedColumns.js'),
  connectorCalls: () => import('../workPlatform/connectorCalls.js'),
  idempotentCalls: () => import('../idempotency/idempotentCalls.js'),
};

/** How a sealed value's context (associated data) is made from its row's key. */
export async function sealedValueContext(column: SealedColumnName): Promise<(recordKey: string[]) => string> {
  if (column === 'connectors.sealed_credential') {
    const { credentialContext } = await modules.connectorCalls();
    return ([id]) => credentialContext(id!);
  }
  if (column === 'idempotency_keys.body') {
    const { answerContext } = await modules.idempotentCalls();
    return ([scope, key]) => answerContext({ scope: scope!, key: key! });
  }
  return ([id]) => id!;
}

const batchSize = 1000;

/** Calls `visit` with every sealed value of the columns, in batches (columns the database lacks are left out). */
async function eachSealedValue(
  source: StoreSource,
  columns: readonly SealedColumnName[] | undefined,
  visit: (column: SealedColumnName, value: { recordKey: string[]; sealed: string }) => void | Promise<void>,
): Promise<void> {
  const { createSealedColumnStore, sealedColumnNames } = await modules.sealedColumns();
  const store = createSealedColumnStore(source);
  for (const column of columns ?? sealedColumnNames) {
    let after: string[] | undefined;
    for (;;) {
      const batch = await store.batch(column, after, batchSize);
      for (const value of batch) await visit(column, value);
      if (batch.length < batchSize) break;
      after = batch.at(-1)!.recordKey;
    }
  }
}

/** Sealed values per column and key id, of every sealed column or of `columns` (those an older copy has). */
export async function countSealedByKeyId(source: StoreSource, columns?: readonly SealedColumnName[]): Promise<Record<string, Record<string, number>>> {
  const { sealedColumnNames } = await modules.sealedColumns();
  const { sealedKeyId } = await modules.secretBox();
  const counts: Record<string, Record<string, number>> = Object.fromEntries((columns ?? sealedColumnNames).map((column) => [column, {}]));
  await eachSealedValue(source, columns, (column, value) => {
    const id = sealedKeyId(value.sealed) ?? 'unknown';
    counts[column]![id] = (counts[column]![id] ?? 0) + 1;
  });
  return counts;
}

export interface SealedKeyCheck {
  column: SealedColumnName;
  keyId: string;
  /** The row whose value was opened: its key, as `recordKey`. */
  record: string[];
}

/**
 * Opens one value of every (column, key id) the database holds with `box`; answers what was opened,
 * or throws a CliError naming the first value that does not open and the keys (`keysLabel`) that
 * failed. Columns the database lacks (an older schema) are skipped.
 */
export async function checkKeysOpenEverySealedKeyId(source: StoreSource, box: SecretBox, columns: readonly SealedColumnName[], keysLabel: string): Promise<SealedKeyCheck[]> {
  const { sealedKeyId } = await modules.secretBox();
  const checked: SealedKeyCheck[] = [];
  const seen = new Set<string>();
  const contexts = new Map<SealedColumnName, (recordKey: string[]) => string>();
  for (const column of columns) contexts.set(column, await sealedValueContext(column));
  await eachSealedValue(source, columns, (column, value) => {
    const keyId = sealedKeyId(value.sealed) ?? 'unknown';
    if (seen.has(`${column} ${keyId}`)) return;
    seen.add(`${column} ${keyId}`);
    try {
      box.open(value.sealed, contexts.get(column)!(value.recordKey));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new CliError(`The sealing key (${keysLabel}): no key opens the value of ${column} sealed with key ${keyId} (row ${value.recordKey.join('/')}): ${reason}. Nothing was replaced.`);
    }
    checked.push({ column, keyId, record: value.recordKey });
  });
  return checked;
}
