// The kit of the Work-Platform's versioned resources (tasks, projects, companies, contacts, deals,
// contracts, connectors). A resource is a table of rows that belong to a workspace and carry
// `version`, `createdAt` and `updatedAt`. Every read and write is scoped by workspace (another
// workspace's row is "not found"), every change raises `version` by one and records its outbox
// event(s) in the same transaction, and a failed length CHECK is worded as the field it guards.
// Each store declares only what is its own: its table, the item the API shows, its sorts and
// filters, and its rules, given to create, update and delete as checks and consequences.
import { and, count, eq, getTableColumns, sql, type SQL } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import { placeholdersFor } from './drizzle.js';
import type { StoreEngine } from './engine.js';
import { engineFilteredKeysetList, type FilteredListOptions } from './filteredLists.js';
import { defaultRandomBytes, type RandomBytes } from './ids.js';
import type { KeysetPage, KeysetRow, SortKeyDefinition } from './keysetPages.js';
import { createOutboxRecorder, type EventActor, type OutboxEventType, type OutboxRecorder } from './outboxEvents.js';
import type { VersionedEntity } from './workPlatformErrors.js';
import { changeWriter, versionedRow, type ConstraintFields } from './workPlatformValues.js';

/** A table of versioned rows of a workspace. */
export type VersionedTable = SQLiteTable & {
  id: SQLiteColumn;
  workspaceId: SQLiteColumn;
  version: SQLiteColumn;
  createdAt: SQLiteColumn;
  updatedAt: SQLiteColumn;
};

/** What every versioned row holds. */
export interface VersionedRow {
  id: string;
  workspaceId: string;
  version: number;
  createdAt: number;
  updatedAt: number;
}

export interface VersionedResourceOptions {
  now?: () => number;
  randomBytes?: RandomBytes;
}

/** A row of a versioned table. */
export type RowOf<T extends VersionedTable> = T['$inferSelect'] & VersionedRow;

/** What an item may be: what an outbox event carries. */
type EventObject = Parameters<OutboxRecorder['record']>[4];

export interface VersionedResourceDefinition<T extends VersionedTable, Item extends EventObject, S extends string, F extends string> {
  table: T;
  /** Names the resource in errors and its events (`<entity>.created`, `.updated`, `.deleted`). */
  entity: VersionedEntity;
  /** The length CHECKs of the table, by constraint name (the same names on both engines). */
  constraintFields: ConstraintFields;
  /** The item the API shows of a row at the instant `at` (ignored by a resource whose items do not depend on time). */
  toItem(row: RowOf<T>, at: number): Item;
  /** Whether what a read shows depends on the instant it is read at: reads then pass `now()` to toItem. */
  shownAsOf?: boolean;
  sortKeys: Record<S, SortKeyDefinition>;
  /** Each filter's condition, written with `sql.placeholder(<filter name>)`. */
  filters: Record<F, SQL>;
  /** What a list reads of a row besides its id: by default every column but `workspaceId` and `unlisted`. */
  listedColumns?: Record<string, SQLiteColumn | SQL>;
  /** Columns a list never reads (a sealed secret, a column only an index needs). */
  unlisted?: readonly string[];
}

/** An update of one row, as a store's rules say. */
export interface RowUpdate<Row> {
  /** The row as the patch leaves it (version and updatedAt still the current ones). */
  apply(current: Row): Row;
  /** The members a patch changes; a patch that changes none of them writes nothing. */
  fields: readonly (keyof Row)[];
  /** Refuses the changed row before anything is written (a reference to a missing record). */
  check?(next: Row, current: Row): void | Promise<void>;
  /** What follows from the change once it has its new version and updatedAt (derived columns, linked rows). */
  settle?(next: Row, current: Row): void | Promise<void>;
  /** The events recorded after `<entity>.updated`, by what changed. */
  moreEvents?(next: Row, current: Row): OutboxEventType[];
}

export interface VersionedResource<Row extends VersionedRow, Item extends EventObject, S extends string, F extends string> {
  readonly now: () => number;
  readonly outbox: OutboxRecorder;
  /** Runs a change in one write transaction (joining the caller's), wording a failed length CHECK as its field. */
  write<T>(change: () => T | Promise<T>): Promise<T>;
  /** The stored row as committed, or undefined: for a read that needs columns the item does not show. */
  read(workspaceId: string, id: string): Promise<Row | undefined>;
  /** The item as of now; undefined when missing or in another workspace. */
  get(workspaceId: string, id: string): Promise<Item | undefined>;
  /** Inside a write: the row a change applies to, which must exist and, when a version is expected, be at it. */
  current(workspaceId: string, id: string, expectedVersion: number | null): Promise<Row>;
  /** Inserts a new row (version 1) and records `<entity>.created`; `check` refuses it first, `settle` writes what goes with it. */
  create(row: Row, actor: EventActor, rules?: { check?(): Promise<void>; settle?(): Promise<void> }): Promise<Item>;
  /** Applies an update when `expectedVersion` is current; a change of none of its fields writes nothing and answers the row as it is. */
  update(workspaceId: string, id: string, expectedVersion: number | null, actor: EventActor, update: RowUpdate<Row>): Promise<Item>;
  /** Inside a write: stores `next` as the next version of `current` at `at` and records each of `events` about it. */
  save(current: Row, next: Row, actor: EventActor, events: readonly OutboxEventType[], at?: number): Promise<Item>;
  /** Inside a write: stores `next` as it is (its version and updatedAt already set). */
  rewrite(next: Row): Promise<void>;
  /**
   * Deletes the row when `expectedVersion` (when given) is current and `check` does not refuse it;
   * `cascade` changes what goes with it, at the instant of the deletion. Records `<entity>.deleted`; answers the item as it was.
   */
  delete(
    workspaceId: string,
    id: string,
    expectedVersion: number | null,
    actor: EventActor,
    rules?: { check?(current: Row): Promise<void>; cascade?(current: Row, at: number): Promise<void> },
  ): Promise<Item>;
  /** Inside a write: deletes `current` and records `<entity>.deleted` at `at`. */
  remove(current: Row, actor: EventActor, at: number): Promise<Item>;
  /** A keyset page of the workspace's items, narrowed by the filters given. */
  list(workspaceId: string, options: FilteredListOptions<S, F>): Promise<KeysetPage<Item>>;
  /** The item of a row read as a list reads it (id, sort key, then the listed columns). */
  fromListedRow(row: KeysetRow, at: number): Item;
}

type Named<Name extends string, Member> = { [Key in Name]: Member };

/**
 * The methods of a versioned resource's store, named after it (`createTask`, `getTask`,
 * `updateTask`, `deleteTask`, `listTasks`). A get answers undefined for a row missing or of another
 * workspace; an update applies the given members when `expectedVersion` is current, and a patch that
 * changes nothing writes nothing; a delete (`expectedVersion` checked when given) answers the item
 * as it was; a list's `updatedSince` is in milliseconds since the epoch. Each store's own rules are
 * told where it declares them.
 */
export type VersionedStore<Name extends string, Plural extends string, Item, Create, Update, ListOptions> = Named<
  `create${Name}`,
  (workspaceId: string, input: Create, actor: EventActor) => Promise<Item>
> &
  Named<`get${Name}`, (workspaceId: string, id: string) => Promise<Item | undefined>> &
  Named<`update${Name}`, (workspaceId: string, id: string, patch: Update, expectedVersion: number, actor: EventActor) => Promise<Item>> &
  Named<`delete${Name}`, (workspaceId: string, id: string, expectedVersion: number | null, actor: EventActor) => Promise<Item>> &
  Named<`list${Plural}`, (workspaceId: string, options: ListOptions) => Promise<KeysetPage<Item>>>;

/**
 * `(row, at) => toItem({ id: row[0], <name>: row[2], … }, at)` for a row read as (id, sort key,
 * columns…), written out once: a listed row then costs one object literal, as a hand-written one would.
 */
function listedRowReader<Row, Item>(names: readonly string[], toItem: (row: Row, at: number) => Item): (row: KeysetRow, at: number) => Item {
  const members = names.map((name, index) => `${JSON.stringify(name)}: row[${index + 2}]`);
  return new Function('toItem', `return (row, at) => toItem({ id: row[0], ${members.join(', ')} }, at);`)(toItem) as (row: KeysetRow, at: number) => Item;
}

export function versionedResource<T extends VersionedTable, Item extends EventObject, S extends string, F extends string>(
  engine: StoreEngine,
  definition: VersionedResourceDefinition<T, Item, S, F>,
  options: VersionedResourceOptions = {},
): VersionedResource<RowOf<T>, Item, S, F> {
  type Row = RowOf<T>;
  const now = options.now ?? Date.now;
  const outbox = createOutboxRecorder(engine, options.randomBytes ?? defaultRandomBytes);
  const { table, entity, toItem } = definition;
  const { orm } = engine;
  const events = { created: `${entity}.created`, updated: `${entity}.updated`, deleted: `${entity}.deleted` } as Record<string, OutboxEventType>;
  const shownAt = definition.shownAsOf ? now : () => 0;

  const columns = getTableColumns(table) as Record<string, SQLiteColumn>;
  const inWorkspace = and(eq(table.workspaceId, sql.placeholder('workspaceId')), eq(table.id, sql.placeholder('id')));
  const selectOne = engine.statement<Row, { workspaceId: string; id: string }>(orm.select().from(table).where(inWorkspace));
  const insert = engine.statement<unknown, Row>(orm.insert(table).values(placeholdersFor(table)));
  // Every column a change may write, each from the placeholder of its name.
  const written = Object.keys(columns).filter((name) => name !== 'id' && name !== 'workspaceId' && name !== 'createdAt');
  const update = engine.statement<unknown, Row>(
    orm
      .update(table)
      .set(Object.fromEntries(written.map((name) => [name, sql`${sql.placeholder(name)}`])) as Partial<Record<keyof T['$inferInsert'], SQL>>)
      .where(inWorkspace),
  );
  const remove = engine.statement(orm.delete(table).where(inWorkspace));

  const unlisted = new Set(['id', 'workspaceId', ...(definition.unlisted ?? [])]);
  const listedColumns =
    definition.listedColumns ?? Object.fromEntries(Object.entries(columns).filter(([name]) => !unlisted.has(name)));
  const fromListedRow = listedRowReader(Object.keys(listedColumns), toItem);
  const list = engineFilteredKeysetList(engine, {
    table,
    idColumn: table.id,
    workspaceColumn: table.workspaceId,
    columns: listedColumns,
    sortKeys: definition.sortKeys,
    filters: definition.filters,
    toItem: fromListedRow,
  });

  const write = changeWriter(engine, definition.constraintFields);
  const current = async (workspaceId: string, id: string, expectedVersion: number | null): Promise<Row> =>
    versionedRow(entity, id, await selectOne.object({ workspaceId, id }), expectedVersion);

  async function save(currentRow: Row, next: Row, actor: EventActor, types: readonly OutboxEventType[], at = now()): Promise<Item> {
    next.version = currentRow.version + 1;
    next.updatedAt = at;
    await update.run(next);
    const item = toItem(next, at);
    for (const type of types) await outbox.record(next.workspaceId, type, actor, at, item);
    return item;
  }

  async function removeRow(currentRow: Row, actor: EventActor, at: number): Promise<Item> {
    await remove.run({ workspaceId: currentRow.workspaceId, id: currentRow.id });
    const item = toItem(currentRow, at);
    await outbox.record(currentRow.workspaceId, events.deleted!, actor, at, item);
    return item;
  }

  return {
    now,
    outbox,
    write,

    read: (workspaceId, id) => engine.read(() => selectOne.object({ workspaceId, id })),

    async get(workspaceId, id) {
      const row = await engine.read(() => selectOne.object({ workspaceId, id }));
      return row ? toItem(row, shownAt()) : undefined;
    },

    current,

    create(row, actor, rules = {}) {
      return write(async () => {
        await rules.check?.();
        await insert.run(row);
        await rules.settle?.();
        const item = toItem(row, row.createdAt);
        await outbox.record(row.workspaceId, events.created!, actor, row.createdAt, item);
        return item;
      });
    },

    update(workspaceId, id, expectedVersion, actor, { apply, fields, check, settle, moreEvents }) {
      return write(async () => {
        const currentRow = await current(workspaceId, id, expectedVersion);
        const next = apply(currentRow);
        if (!fields.some((name) => next[name] !== currentRow[name])) return toItem(currentRow, shownAt());
        await check?.(next, currentRow);
        next.version = currentRow.version + 1;
        next.updatedAt = now();
        await settle?.(next, currentRow);
        return save(currentRow, next, actor, [events.updated!, ...(moreEvents?.(next, currentRow) ?? [])], next.updatedAt);
      });
    },

    save,

    async rewrite(next) {
      await update.run(next);
    },

    delete(workspaceId, id, expectedVersion, actor, rules = {}) {
      return write(async () => {
        const currentRow = await current(workspaceId, id, expectedVersion);
        await rules.check?.(currentRow);
        const at = now();
        await rules.cascade?.(currentRow, at);
        return removeRow(currentRow, actor, at);
      });
    },

    remove: removeRow,

    list: definition.shownAsOf ? (workspaceId, listOptions) => list(workspaceId, listOptions, now()) : list,

    fromListedRow,
  };
}

/**
 * How many rows of `table` in a workspace name the given id in `column`: what a delete rule checks
 * (a company that deals name, a project that has tasks).
 */
export function referenceCounter(
  engine: StoreEngine,
  table: SQLiteTable & { workspaceId: SQLiteColumn },
  column: SQLiteColumn,
): (workspaceId: string, id: string) => Promise<number> {
  const statement = engine.statement<unknown, { workspaceId: string; id: string }>(
    engine.orm
      .select({ count: count() })
      .from(table)
      .where(and(eq(table.workspaceId, sql.placeholder('workspaceId')), eq(column, sql.placeholder('id')))),
  );
  return async (workspaceId, id) => Number((await statement.value({ workspaceId, id })) ?? 0);
}
