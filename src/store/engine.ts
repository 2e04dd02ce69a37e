// The one store interface over both engines. Every store writes its statements once, with drizzle's
// SQLite query builder over the tables of db/schema.ts; the engine runs that SQL on better-sqlite3
// or, with `?` numbered as `$1, $2, …`, on PostgreSQL, whose schema (db/postgres/schema.ts) has the
// same tables, columns and constraint names (npm run check:schema). The few expressions the two
// dialects spell differently come from `engine.dialect`.
//
// A change runs in `engine.write`: one transaction that every store call made inside it joins
// (a savepoint when nested; on PostgreSQL only once a caller went on after a nested change failed,
// see `transaction`), found through the async context. On SQLite that is BEGIN IMMEDIATE on
// the process's one connection (src/store/writeTransactions.ts). On PostgreSQL it is a pooled
// connection at SERIALIZABLE: the same guarantee as SQLite's single writer (a read-then-write
// decision such as an If-Match check or an idempotency claim cannot interleave with another
// instance's), and a transaction the server refuses as a serialization failure is run again from
// the start, as SQLite's busy writer is.
import { AsyncLocalStorage } from 'node:async_hooks';
import type BetterSqlite3 from 'better-sqlite3';
import * as drizzleOrm from 'drizzle-orm';
import { Param, Placeholder, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import type pg from 'pg';
import * as schema from '../../db/schema.js';
import { drizzleFor, type AppDatabase, type BuiltQuery } from './drizzle.js';
import { collectionRowsNotice } from './cachedRows.js';
import { asStoreFailure } from './errors.js';
import { readCommitted, sqliteWriteTransactions } from './writeTransactions.js';

export type EngineKind = 'sqlite' | 'postgres';

/** A selected field and where its value goes in the result object, as drizzle orders them. */
type SelectedField = { path: string[]; field: unknown };
// What drizzle's own prepare() maps rows with: exported at run time, left out of its types (@internal).
const { mapResultRow, orderSelectedFields } = drizzleOrm as unknown as {
  mapResultRow(fields: SelectedField[], row: unknown[], joinsNotNullableMap: undefined): unknown;
  orderSelectedFields(fields: Record<string, unknown>): SelectedField[];
};

/** A statement compiled once; its placeholders are bound by name from one arguments object. */
export interface EngineStatement<Args extends object, Row extends readonly unknown[], Item> {
  /** Rows as arrays, in the order the query selects its columns. */
  rows(args: Args): Promise<Row[]>;
  /** The first row as an array, or undefined. */
  row(args: Args): Promise<Row | undefined>;
  /** The first column of the first row, or undefined. */
  value(args: Args): Promise<unknown>;
  /** Rows as objects keyed and decoded as drizzle's select (or `returning`) says. */
  objects(args: Args): Promise<Item[]>;
  /** The first row as such an object, or undefined. */
  object(args: Args): Promise<Item | undefined>;
  /** Runs the statement and answers how many rows it changed. */
  run(args: Args): Promise<number>;
}

/** The expressions the two dialects spell differently. */
export interface DialectSql {
  /** The larger of two values (SQLite's two-argument max, PostgreSQL's GREATEST). */
  greatest(a: SQLWrapper, b: SQLWrapper): SQL;
  /** `YYYY-MM` of a time in epoch milliseconds, in UTC. */
  utcMonth(epochMs: SQLWrapper): SQL;
  /** Whether a text column holding a JSON array of strings has `value` among them. */
  jsonArrayHas(column: SQLWrapper, value: SQLWrapper): SQL;
  /** Whether `value` is one of the strings of a JSON array given as text (a parameter), written so that an index on `value` serves it. */
  inJsonArray(value: SQLWrapper, jsonArray: SQLWrapper): SQL;
  /** 16 lowercase hexadecimal digits, drawn anew for every row a statement touches. */
  randomHex16(): SQL;
  /**
   * What ends a select of rows to claim: PostgreSQL locks them for the transaction and skips rows
   * another transaction holds (FOR UPDATE SKIP LOCKED), so that concurrent claimers take different
   * rows without waiting; SQLite needs nothing (BEGIN IMMEDIATE already serializes the writers).
   */
  skipLockedRows(): SQL;
}

export interface StoreEngine {
  readonly kind: EngineKind;
  /** The builder the stores write their statements with (SQLite's dialect; see the top of this file). Never runs a query itself on PostgreSQL. */
  readonly orm: AppDatabase;
  readonly dialect: DialectSql;
  /**
   * Runs `change` in one write transaction and commits it, or rolls everything back when it
   * throws. Inside another `write` (however deep in its awaits) it joins that transaction as a
   * savepoint. On PostgreSQL a transaction refused for a serialization failure runs again, a few
   * times, from the start: a change must not do anything outside the database it cannot repeat.
   */
  write<T>(change: () => T | Promise<T>): Promise<T>;
  /** Runs reads that must see only committed data (on SQLite, after the open transaction of another request ends). */
  read<T>(read: () => T | Promise<T>): Promise<T>;
  /**
   * Runs several reads that must agree with each other: one snapshot (PostgreSQL: a read-only
   * REPEATABLE READ transaction; SQLite: a deferred read transaction in the connection's queue, so
   * no change of this process lands between them and another process's write lock does not block
   * it). Inside a write it reads in that transaction.
   */
  snapshot<T>(read: () => T | Promise<T>): Promise<T>;
  /**
   * Runs a change whose every statement is atomic by itself (an upsert that counts) without one
   * transaction around its statements. PostgreSQL runs each in a transaction of its own at READ
   * COMMITTED: an upsert of a row another instance is changing waits for that row's lock and then
   * adds to its committed count, where inside `write` it would fail serialization and run again.
   * SQLite runs the change as a `write` (its writers take turns anyway). Inside a `write` it joins it.
   */
  autocommit<T>(change: () => T | Promise<T>): Promise<T>;
  /**
   * Runs `callback` on a later turn of the event loop once the write transaction open in this
   * async context has committed; never when it rolls back (a PostgreSQL change run again registers
   * its callbacks again). A nested change rolled back to its savepoint keeps its callbacks: they
   * run if the outer transaction commits. Outside a transaction: on a later turn, at once.
   */
  afterCommit(callback: () => void): void;
  /**
   * Tells every process listening on `channel` (see `listen`) that the open write transaction
   * committed: on PostgreSQL a NOTIFY on the pool once its COMMIT is confirmed (none after a
   * rollback; at once outside a transaction; commits close together may share one). SQLite
   * announces nothing: its other processes notice commits by PRAGMA data_version
   * (src/webhooks/worker/deliveryLoop.ts).
   */
  announceCommit(channel: string): void;
  /**
   * Calls `listener` whenever any process announces a commit on `channel`, and once more after the
   * listening connection (PostgreSQL: one of its own, outside the pool) was lost and made again, as
   * announcements may have been missed meanwhile (the payload is then empty). `onLost` is called
   * when the listening connection is lost (or could not be made), before any announcement may
   * have been missed. Resolves to a function that stops listening. SQLite: never calls either.
   */
  listen(channel: string, listener: (payload: string) => void, onLost?: () => void): Promise<() => Promise<void>>;
  /**
   * A stamp of `tables` that grows once something may have been written to one of them since it
   * was last read, and otherwise stays the same (SQLite: this connection's own writes to each table,
   * counted at once, rollbacks too; and PRAGMA data_version, which other connections' commits move,
   * read once per turn of the event loop, so another process's commit shows from the next turn).
   * Read it first: what is read after it stays current for as long as the stamp stays the same. A
   * table whose writes cannot be counted yet gives a stamp that never repeats (nothing is kept).
   * PostgreSQL has none (undefined): there, read again each time.
   */
  readonly changeStamp: ((tables: readonly string[]) => number) | undefined;
  statement<Item = unknown, Args extends object = Record<string, unknown>, Row extends readonly unknown[] = unknown[]>(
    query: BuiltQuery,
  ): EngineStatement<Args, Row, Item>;
  /** Closes what the engine opened (PostgreSQL's pool); the SQLite connection is its opener's to close. */
  close(): Promise<void>;
}

/** The SQL and the value of each parameter: a placeholder bound from the call's arguments (through its column's encoder), or a literal. */
interface CompiledQuery {
  source: string;
  bind: (args: object) => unknown[];
  fields: SelectedField[] | undefined;
}

function compile(query: BuiltQuery): CompiledQuery {
  const { sql: source, params } = query.toSQL();
  const binders = params.map((param): ((args: Record<string, unknown>) => unknown) => {
    if (param instanceof Placeholder) return (args) => args[param.name];
    if (param instanceof Param) {
      const { value, encoder } = param;
      if (value instanceof Placeholder) return encoder ? (args) => encoder.mapToDriverValue(args[value.name]) : (args) => args[value.name];
      const encoded = encoder ? encoder.mapToDriverValue(value) : value;
      return () => encoded;
    }
    return () => param;
  });
  return { source, bind: (args) => binders.map((binder) => binder(args as Record<string, unknown>)), fields: selectedFields(query) };
}

/** The fields drizzle maps a row of this query to: a select's selection, or an insert's, update's or delete's `returning`. */
function selectedFields(query: BuiltQuery): SelectedField[] | undefined {
  // drizzle keeps both in the builder's config (what its own prepare() reads).
  const { config } = query as { config?: { fields?: Record<string, unknown>; returning?: SelectedField[] } };
  if (config?.fields) return orderSelectedFields(config.fields);
  return config?.returning;
}

interface ReadyQuery<Item> extends CompiledQuery {
  toObject(row: unknown[]): Item;
}

/**
 * The query compiled on its first run: the stores make about 190 statements when they are created, most of which a
 * process does not run soon or at all, and compiling them all took about 50 ms at each start.
 */
function compiledOnFirstRun<Item>(query: BuiltQuery): () => ReadyQuery<Item> {
  let ready: ReadyQuery<Item> | undefined;
  return () => {
    if (!ready) {
      const compiled = compile(query);
      ready = { ...compiled, toObject: objectMapper<Item>(compiled) };
    }
    return ready;
  };
}

function objectMapper<Item>(compiled: CompiledQuery): (row: unknown[]) => Item {
  const { fields } = compiled;
  if (!fields) return () => {
    throw new Error(`a statement that selects nothing cannot read objects: ${compiled.source}`);
  };
  return (row) => mapResultRow(fields, row, undefined) as Item;
}

const sqliteDialect: DialectSql = {
  greatest: (a, b) => sql`max(${a}, ${b})`,
  utcMonth: (epochMs) => sql`strftime('%Y-%m', ${epochMs} / 1000, 'unixepoch')`,
  jsonArrayHas: (column, value) => sql`exists (select 1 from json_each(${column}) where json_each.value = ${value})`,
  inJsonArray: (value, jsonArray) => sql`${value} in (select value from json_each(${jsonArray}))`,
  randomHex16: () => sql`lower(hex(randomblob(8)))`,
  skipLockedRows: () => sql``,
};

const postgresDialect: DialectSql = {
  greatest: (a, b) => sql`greatest(${a}, ${b})`,
  utcMonth: (epochMs) => sql`to_char(to_timestamp(${epochMs} / 1000) at time zone 'UTC', 'YYYY-MM')`,
  // jsonb_exists is the function behind the `?` operator, which the parameter numbering would take for a parameter.
  jsonArrayHas: (column, value) => sql`jsonb_exists(${column}::jsonb, ${value})`,
  inJsonArray: (value, jsonArray) => sql`${value} in (select jsonb_array_elements_text(cast(${jsonArray} as jsonb)))`,
  // gen_random_uuid() is built in (no pgcrypto); its md5 spreads the random bits over every digit.
  randomHex16: () => sql`left(md5(cast(gen_random_uuid() as text)), 16)`,
  skipLockedRows: () => sql`for update skip locked`,
};

const sqliteEngines = new WeakMap<BetterSqlite3.Database, StoreEngine>();

/** The engine of a SQLite connection, made once per connection (every store on it shares its transaction queue). */
export function sqliteEngine(db: BetterSqlite3.Database): StoreEngine {
  let engine = sqliteEngines.get(db);
  if (!engine) {
    engine = createSqliteEngine(db);
    sqliteEngines.set(db, engine);
  }
  return engine;
}

/** What the stores accept while callers move from a SQLite connection to an engine. */
export type StoreSource = BetterSqlite3.Database | StoreEngine;

export function engineOf(source: StoreSource): StoreEngine {
  return isEngine(source) ? source : sqliteEngine(source);
}

export function isEngine(source: StoreSource): source is StoreEngine {
  return typeof (source as StoreEngine).statement === 'function' && typeof (source as StoreEngine).write === 'function';
}

/**
 * Runs `work`, raising an unreachable engine's error (a refused or lost PostgreSQL connection, a
 * SQLite file that cannot be opened or read) as StoreUnavailableError: the one outage error callers see.
 */
async function failingAsStore<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asStoreFailure(error);
  }
}

/** failingAsStore for the synchronous driver's calls. */
function failingAsStoreNow<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw asStoreFailure(error);
  }
}

/**
 * PRAGMA data_version starts a read of the WAL index, so it is read once per turn of the event loop,
 * and each change of it counts as one commit of another connection, to every table.
 * This connection's own writes are counted per table by temporary triggers, which belong to this
 * connection alone and are not in the file's schema: every write to a watched table, however it is
 * made (a store statement, drizzle, a foreign key's cascade, an upsert, another table's trigger),
 * calls `own_write_counted` during its statement, so it shows at once, before its commit. A write
 * that then rolls back has moved the stamp for nothing, which costs one read again. A table's
 * triggers are made the first time its stamp is asked for outside a transaction: made inside one,
 * they would be undone by its rollback. Until then, or where they cannot be made (the table does not
 * exist yet), its stamp never repeats. A change of the file's schema (a table dropped or rebuilt on
 * this connection drops its triggers), seen once per turn with data_version, drops everything kept
 * and makes the triggers again; the server changes no schema after its start.
 */
function changeStampOf(db: BetterSqlite3.Database): (tables: readonly string[]) => number {
  // One statement for both (one look at the WAL index): about 6 µs, against 3.5 for data_version alone.
  const versions = db.prepare<[], [dataVersion: number, schemaVersion: number]>('SELECT data_version, (SELECT schema_version FROM pragma_schema_version) FROM pragma_data_version').raw(true);
  let [lastDataVersion, lastSchemaVersion] = versions.get()!;
  let otherCommits = 0;
  let checkedThisTurn = false;
  const checkNextTurn = () => {
    checkedThisTurn = false;
  };
  const ownWrites = new Map<string, number>();
  /** Tables whose three triggers all exist. */
  const watched = new Set<string>();
  let counting = false;
  let uncounted = 0;
  const watch = (table: string): boolean => {
    if (watched.has(table)) return true;
    if (db.inTransaction || !/^[a-z_][a-z0-9_]*$/.test(table)) return false;
    try {
      if (!counting) {
        db.function('own_write_counted', { deterministic: false }, (written: unknown) => {
          ownWrites.set(String(written), (ownWrites.get(String(written)) ?? 0) + 1);
          return null;
        });
        counting = true;
      }
      for (const operation of ['insert', 'update', 'delete']) {
        db.exec(`CREATE TEMP TRIGGER IF NOT EXISTS own_write_${table}_${operation} AFTER ${operation.toUpperCase()} ON main."${table}" BEGIN SELECT own_write_counted('${table}'); END`);
      }
      watched.add(table);
      return true;
    } catch {
      return false;
    }
  };
  return (tables) => {
    if (!checkedThisTurn) {
      const [version, schema] = versions.get()!;
      if (version !== lastDataVersion) {
        lastDataVersion = version;
        otherCommits += 1;
      }
      // A table dropped (or rebuilt) on this connection took its triggers with it: count nothing as
      // kept, and make them again.
      if (schema !== lastSchemaVersion) {
        lastSchemaVersion = schema;
        watched.clear();
        otherCommits += 1;
      }
      checkedThisTurn = true;
      setImmediate(checkNextTurn);
    }
    let stamp = otherCommits;
    for (const table of tables) {
      // Below zero, and new at every call: equal to no stamp given before or after.
      if (!watch(table)) return (uncounted -= 1);
      stamp += ownWrites.get(table) ?? 0;
    }
    return stamp;
  };
}

function createSqliteEngine(db: BetterSqlite3.Database): StoreEngine {
  const transactions = sqliteWriteTransactions(db);
  return {
    kind: 'sqlite',
    orm: drizzleFor(db),
    dialect: sqliteDialect,
    write: (change) => failingAsStore(() => transactions.write(change)),
    read: (read) => failingAsStore(() => readCommitted(transactions, read)),
    snapshot: (read) => failingAsStore(() => transactions.snapshot(read)),
    autocommit: (change) => failingAsStore(() => transactions.write(change)),
    afterCommit: (callback) => transactions.afterCommit(callback),
    announceCommit: () => undefined,
    listen: async () => async () => undefined,
    changeStamp: changeStampOf(db),
    statement<Item, Args extends object, Row extends readonly unknown[]>(query: BuiltQuery): EngineStatement<Args, Row, Item> {
      const compiled = compiledOnFirstRun<Item>(query);
      // Prepared on first use, one statement per reading mode (better-sqlite3 sets the mode on the statement).
      let arrays: BetterSqlite3.Statement<unknown[], Row> | undefined;
      let values: BetterSqlite3.Statement<unknown[], unknown> | undefined;
      let writes: BetterSqlite3.Statement<unknown[], unknown> | undefined;
      const arrayStatement = () => {
        transactions.refuseEnded();
        return (arrays ??= db.prepare<unknown[], Row>(compiled().source).raw(true));
      };
      return {
        rows: async (args) => failingAsStoreNow(() => arrayStatement().all(...compiled().bind(args))),
        row: async (args) => failingAsStoreNow(() => arrayStatement().get(...compiled().bind(args))),
        value: async (args) =>
          failingAsStoreNow(() => {
            transactions.refuseEnded();
            return (values ??= db.prepare<unknown[], unknown>(compiled().source).pluck(true)).get(...compiled().bind(args));
          }),
        objects: async (args) =>
          failingAsStoreNow(() => arrayStatement().all(...compiled().bind(args))).map((row) => compiled().toObject(row as unknown as unknown[])),
        object: async (args) => {
          const row = failingAsStoreNow(() => arrayStatement().get(...compiled().bind(args)));
          return row === undefined ? undefined : compiled().toObject(row as unknown as unknown[]);
        },
        run: async (args) =>
          failingAsStoreNow(() => {
            transactions.refuseEnded();
            return (writes ??= db.prepare<unknown[], unknown>(compiled().source)).run(...compiled().bind(args)).changes;
          }),
      };
    },
    close: async () => undefined,
  };
}

/** SQLSTATEs after which PostgreSQL's transaction is run again: serialization failure and deadlock, as often as the options allow. */
const retriedStates = new Set(['40001', '40P01']);
/**
 * A unique key a concurrent transaction took (23505) is worth one more run: it then sees that
 * row and decides on it, as under SQLite's single writer. A duplicate that no race explains fails
 * the same way again, so it is not run a third time.
 */
const uniqueViolation = '23505';

function runAgain(error: unknown, attempt: number, maxAttempts: number): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (attempt >= maxAttempts) return false;
  return code === uniqueViolation ? attempt === 1 : typeof code === 'string' && retriedStates.has(code);
}

export interface PostgresEngineOptions {
  /** How many times a transaction runs at most before its serialization failure reaches the caller (busy: a 503 to retry). */
  maxAttempts?: number;
  /** Milliseconds to wait before attempt `n` (n ≥ 2). Default: a random 1…min(5·2ⁿ, 200) ms, so that two retrying transactions part. */
  retryDelayMs?: (attempt: number) => number;
  /** Milliseconds before a lost LISTEN connection is made again (`listen`). Default 1000. */
  relistenDelayMs?: number;
  /** What a committed write to some tables announces. Default: src/store/cachedRows.ts's `collectionRowsNotice`. */
  announcedWrites?: AnnouncedWrites;
}

/**
 * Committed writes (insert, update, delete statements) to one of `tables` that are announced on
 * `channel` with `payload`, whichever of the engine's callers made them: by a NOTIFY after the
 * commit, and to this process's own listeners of `channel` at once, before the write resolves.
 */
export interface AnnouncedWrites {
  tables: readonly string[];
  channel: string;
  payload: string;
}

/** The table an insert, update or delete statement writes to (drizzle's SQLite dialect names it first, quoted). */
function writtenTable(source: string): string | undefined {
  return /^(?:insert into|update|delete from) "([^"]+)"/.exec(source)?.[1];
}

interface PostgresTransaction {
  client: pg.PoolClient;
  /** Savepoints open inside it, innermost last. */
  savepoints: string[];
  made: number;
  ended: boolean;
  /** What runs once it has committed. */
  committed: (() => void)[];
  /** The announcements to make once it has committed (`noticeKey`s). */
  announced: Map<string, Notice>;
  /**
   * Its BEGIN, SAVEPOINTs and RELEASEs not sent yet: they go with the next statement's round trip
   * before it (one simple query), or with the COMMIT. A savepoint no statement ran in is never sent.
   */
  pending: string[];
  /** Whether nested changes run inside savepoints (see `joined`). */
  savepointed: boolean;
  /** Statements sent so far. */
  statements: number;
  /** A nested change without a savepoint failed after its statements ran: it cannot be undone alone. */
  undoneOnlyWhole: boolean;
  /** A statement or the COMMIT was refused because of `undoneOnlyWhole`: the transaction runs again, with savepoints. */
  refusedForSavepoints: boolean;
}

/**
 * Refuses what a transaction would do after a nested change that cannot be undone alone failed.
 * A caller may catch it like any error; the engine runs the transaction again with savepoints
 * whatever became of it (`refusedForSavepoints`).
 */
class SavepointsNeeded extends Error {}

interface PostgresFrame {
  transaction: PostgresTransaction;
  savepoint: string | undefined;
}

/** An announcement: a NOTIFY on `channel`, with `payload` when it is not empty. */
interface Notice {
  channel: string;
  payload: string;
}

const noticeKey = ({ channel, payload }: Notice) => `${channel}\u0000${payload}`;

const notifyStatement = ({ channel, payload }: Notice) => (payload === '' ? `NOTIFY ${channel}` : `NOTIFY ${channel}, '${payload}'`);

/** Statement names the pool's connections prepare a text under: one name per text, however many engines use it. */
const preparedNames = new Map<string, string>();

/** Numbers the `?` parameters drizzle's SQLite dialect writes as PostgreSQL's `$1, $2, …`, leaving quoted text and identifiers alone. */
export function numberedParameters(source: string): string {
  let index = 0;
  let out = '';
  let quote: string | undefined;
  for (const char of source) {
    if (quote) {
      if (char === quote) quote = undefined;
      out += char;
    } else if (char === "'" || char === '"') {
      quote = char;
      out += char;
    } else if (char === '?') {
      index += 1;
      out += `$${index}`;
    } else {
      out += char;
    }
  }
  return out;
}

/**
 * drizzle's SQLite SQL as PostgreSQL takes it: parameters numbered, and an upsert's conflict target
 * unqualified (`on conflict ("t"."c")` is SQLite's spelling; PostgreSQL refuses the table name there).
 */
export function postgresStatementText(source: string): string {
  return numberedParameters(source).replace(/on conflict \(([^)]*)\)/g, (_, target: string) => `on conflict (${target.replace(/"[^"]+"\."([^"]+)"/g, '"$1"')})`);
}

/** A channel is written into NOTIFY and LISTEN as it is: only a plain lower-case identifier. */
function channelName(channel: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
  return channel;
}

/**
 * LISTEN on a client of its own, made with the pool's settings, so that no pooled connection is
 * held for ever. A lost connection is made again after `relistenDelayMs` (meanwhile, listeners rely
 * on their own sweeps), and the listener is called once when it is back.
 */
async function listenOn(
  pool: pg.Pool,
  channel: string,
  listener: (payload: string) => void,
  relistenDelayMs: number,
  whenLost: (() => void) | undefined,
): Promise<() => Promise<void>> {
  const Client = (pool as unknown as { Client: typeof pg.Client }).Client;
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  const listenLater = () => {
    if (stopped || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      void connect(true);
    }, relistenDelayMs);
    retry.unref();
  };
  const connect = async (again: boolean): Promise<void> => {
    // Keep-alive: an idle connection that a NAT or load balancer drops silently is noticed (as an error).
    const made = new Client({ ...pool.options, keepAlive: true });
    let lost = false;
    const onLost = () => {
      if (lost) return;
      lost = true;
      if (client === made) client = undefined;
      if (!stopped) whenLost?.();
      void made.end().catch(() => undefined);
      listenLater();
    };
    made.on('notification', (message) => {
      if (message.channel === channel) listener(message.payload ?? '');
    });
    made.on('error', onLost);
    made.on('end', onLost);
    try {
      await made.connect();
      await made.query(`LISTEN ${channel}`);
    } catch {
      onLost();
      return;
    }
    if (stopped) {
      lost = true;
      await made.end().catch(() => undefined);
      return;
    }
    client = made;
    if (again) listener('');
  };
  await connect(false);
  return async () => {
    stopped = true;
    if (retry) clearTimeout(retry);
    await client?.end().catch(() => undefined);
  };
}

/** An engine over a PostgreSQL pool (src/store/postgres.ts opens it); closing the engine ends the pool. */
export function postgresEngine(pool: pg.Pool, options: PostgresEngineOptions = {}): StoreEngine {
  const context = new AsyncLocalStorage<PostgresFrame>();
  const maxAttempts = options.maxAttempts ?? 10;
  const retryDelayMs = options.retryDelayMs ?? ((attempt: number) => 1 + Math.random() * Math.min(5 * 2 ** attempt, 200));
  const builder = drizzle.mock({ schema });

  /** Runs a statement on the open transaction's connection (after what it holds pending), else on any of the pool's. */
  async function runStatement(config: pg.QueryArrayConfig): Promise<pg.QueryArrayResult> {
    const frame = context.getStore();
    if (!frame) return pool.query(config);
    const { transaction } = frame;
    const refuseEnded = () => {
      if (transaction.ended) throw new Error('the write transaction this statement belongs to has already ended');
    };
    refuseEnded();
    refuseWithoutSavepoint(transaction);
    transaction.statements += 1;
    if (transaction.pending.length > 0) {
      await sendPending(transaction);
      // It may have ended meanwhile (a change beside this one failed): the statement must not run after its ROLLBACK.
      refuseEnded();
    }
    return transaction.client.query(config);
  }

  function refuseWithoutSavepoint(transaction: PostgresTransaction): void {
    if (!transaction.undoneOnlyWhole) return;
    transaction.refusedForSavepoints = true;
    throw new SavepointsNeeded('a nested change that ran statements failed, and its transaction went on: it runs again with savepoints');
  }

  async function sendPending(transaction: PostgresTransaction, last?: string): Promise<void> {
    const statements = transaction.pending.splice(0);
    if (last) statements.push(last);
    if (statements.length > 0) await transaction.client.query(statements.join('; '));
  }

  /**
   * NOTIFY after the commit, on the pool, not inside the transaction: a transaction that NOTIFYs
   * takes a lock of the whole cluster at its commit and holds it through the WAL flush, so every
   * commit that announced would wait for the one before. No caller waits for it. At most one NOTIFY
   * per notice is in flight; commits meanwhile are announced by one more when it ends. One lost in
   * a crash after the commit is made up for by the listeners' own sweeps and bounds.
   */
  const announcing = new Map<string, 'sending' | 'again'>();
  function announce(notice: Notice): void {
    const key = noticeKey(notice);
    if (announcing.has(key)) {
      announcing.set(key, 'again');
      return;
    }
    announcing.set(key, 'sending');
    void pool
      .query(notifyStatement(notice))
      .catch(() => undefined)
      .finally(() => {
        const again = announcing.get(key) === 'again';
        announcing.delete(key);
        if (again) announce(notice);
      });
  }

  /** This process's listeners, per channel: they hear an announced write at its commit, before its NOTIFY comes back. */
  const localListeners = new Map<string, Set<(payload: string) => void>>();
  const announcedWrites = options.announcedWrites ?? collectionRowsNotice;
  channelName(announcedWrites.channel);
  if (!/^[a-z_]+$/.test(announcedWrites.payload)) throw new Error(`not a payload to announce: ${announcedWrites.payload}`);
  const writeNotice: Notice = { channel: announcedWrites.channel, payload: announcedWrites.payload };
  const writeNoticeKey = noticeKey(writeNotice);
  const announcedTables = new Set(announcedWrites.tables);
  function tellLocalListeners(notice: Notice): void {
    for (const listener of localListeners.get(notice.channel) ?? []) {
      try {
        listener(notice.payload);
      } catch {
        // The write has committed: a listener's failure must not make it read as failed (each listener keeps its own bounds).
      }
    }
  }

  async function write<T>(change: () => T | Promise<T>): Promise<T> {
    const frame = context.getStore();
    if (frame && !frame.transaction.ended) return joined(frame, change);
    return transaction(change, 'BEGIN ISOLATION LEVEL SERIALIZABLE');
  }

  async function snapshot<T>(read: () => T | Promise<T>): Promise<T> {
    const frame = context.getStore();
    if (frame && !frame.transaction.ended) return read();
    return transaction(read, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  }

  /**
   * Nested changes first run without savepoints: most failures end the whole transaction anyway,
   * and a savepoint costs a round trip and a subtransaction. Should a caller catch the failure of a
   * nested change that ran statements and go on, the transaction is rolled back and runs again
   * from the start with savepoints, as after a serialization failure.
   */
  async function transaction<T>(change: () => T | Promise<T>, begin: string): Promise<T> {
    let savepointed = false;
    for (let attempt = 1; ; attempt += 1) {
      const client = await pool.connect();
      const transaction: PostgresTransaction = {
        client,
        savepoints: [],
        made: 0,
        ended: false,
        committed: [],
        announced: new Map(),
        pending: [begin],
        savepointed,
        statements: 0,
        undoneOnlyWhole: false,
        refusedForSavepoints: false,
      };
      let broken: Error | undefined;
      // The server may end the connection between two statements (a restart, a failover: 57P01). pg reports that as
      // an 'error' event on the client, which the pool no longer listens to while the client is checked out: without
      // this listener it would end the process. The next statement then fails, and the call answers as unreachable.
      const onLost = (error: Error) => (broken ??= error);
      client.on('error', onLost);
      try {
        try {
          const result = await context.run({ transaction, savepoint: undefined }, change);
          refuseWithoutSavepoint(transaction);
          // Ended before COMMIT is sent: a statement a stray change issues now is refused, not run after it.
          transaction.ended = true;
          // A transaction that ran no statement was never begun.
          if (transaction.pending[0] === begin) transaction.pending.length = 0;
          else await sendPending(transaction, 'COMMIT');
          // Only once the COMMIT is confirmed, and apart from it: a NOTIFY in the COMMIT's round trip would make a
          // failure after a commit that stands (a lost connection, a timeout) read as a failed transaction.
          for (const notice of transaction.announced.values()) announce(notice);
          if (transaction.announced.has(writeNoticeKey)) tellLocalListeners(writeNotice);
          for (const callback of transaction.committed) setImmediate(callback);
          return result;
        } catch (error) {
          transaction.ended = true;
          if (transaction.pending[0] === begin) transaction.pending.length = 0;
          else {
            transaction.pending.length = 0;
            await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
          }
          if (transaction.refusedForSavepoints && !savepointed) {
            savepointed = true;
            // Not a failure of the database: this run does not count as an attempt, and the next starts at once.
            attempt -= 1;
            continue;
          }
          if (!runAgain(error, attempt, maxAttempts)) throw error;
        }
      } finally {
        client.off('error', onLost);
        // A connection that was lost, or whose rollback failed, is not handed to the next caller.
        client.release(broken);
      }
      await new Promise((resolve) => setTimeout(resolve, retryDelayMs(attempt + 1)));
    }
  }

  async function joined<T>(frame: PostgresFrame, change: () => T | Promise<T>): Promise<T> {
    const { transaction } = frame;
    if (transaction.savepoints.at(-1) !== frame.savepoint) {
      throw new Error('two changes ran at once inside one write transaction: await one before starting the next');
    }
    const savepoint = `nested_change_${(transaction.made += 1)}`;
    // Pushed before the await, so that a second change started meanwhile is refused above.
    transaction.savepoints.push(savepoint);
    if (!transaction.savepointed) {
      const statementsBefore = transaction.statements;
      try {
        const result = await context.run({ transaction, savepoint }, change);
        if (transaction.ended) throw new Error('the write transaction this change joined has already ended');
        return result;
      } catch (error) {
        if (transaction.statements !== statementsBefore) transaction.undoneOnlyWhole = true;
        throw error;
      } finally {
        if (!transaction.ended) transaction.savepoints.pop();
      }
    }
    const opening = `SAVEPOINT ${savepoint}`;
    transaction.pending.push(opening);
    try {
      const result = await context.run({ transaction, savepoint }, change);
      if (transaction.ended) throw new Error('the write transaction this change joined has already ended');
      // No statement ran inside: the savepoint was never sent.
      if (transaction.pending.at(-1) === opening) transaction.pending.pop();
      else transaction.pending.push(`RELEASE SAVEPOINT ${savepoint}`);
      return result;
    } catch (error) {
      if (!transaction.ended) {
        const unsent = transaction.pending.indexOf(opening);
        // Not sent: nothing ran inside it (a statement sends what is pending first), nothing to undo.
        if (unsent >= 0) transaction.pending.length = unsent;
        else {
          // What is pending lies inside this savepoint (releases of inner ones), undone with it.
          transaction.pending.length = 0;
          // The change's own error reaches the caller, not a failure of undoing it.
          await transaction.client.query(`ROLLBACK TO SAVEPOINT ${savepoint}; RELEASE SAVEPOINT ${savepoint}`).catch(() => undefined);
        }
      }
      throw error;
    } finally {
      if (!transaction.ended) transaction.savepoints.pop();
    }
  }

  return {
    kind: 'postgres',
    orm: builder as unknown as AppDatabase,
    dialect: postgresDialect,
    write: (change) => failingAsStore(() => write(change)),
    read: async (read) => read(),
    snapshot: (read) => failingAsStore(() => snapshot(read)),
    // Outside a transaction every statement runs on the pool, in a transaction of its own; inside one it joins it.
    autocommit: async (change) => change(),
    afterCommit(callback) {
      const frame = context.getStore();
      if (frame && !frame.transaction.ended) frame.transaction.committed.push(callback);
      else setImmediate(callback);
    },
    announceCommit(channel) {
      const notice = { channel: channelName(channel), payload: '' };
      const frame = context.getStore();
      if (frame && !frame.transaction.ended) frame.transaction.announced.set(noticeKey(notice), notice);
      else announce(notice);
    },
    async listen(channel, listener, onLost) {
      const name = channelName(channel);
      const stop = await listenOn(pool, name, listener, options.relistenDelayMs ?? 1000, onLost);
      let listeners = localListeners.get(name);
      if (!listeners) localListeners.set(name, (listeners = new Set()));
      listeners.add(listener);
      return async () => {
        listeners.delete(listener);
        await stop();
      };
    },
    changeStamp: undefined,
    statement<Item, Args extends object, Row extends readonly unknown[]>(query: BuiltQuery): EngineStatement<Args, Row, Item> {
      const compiled = compiledOnFirstRun<Item>(query);
      let prepared: { name: string; text: string } | undefined;
      const preparedStatement = () => {
        if (prepared) return prepared;
        const text = postgresStatementText(compiled().source);
        let name = preparedNames.get(text);
        if (name === undefined) {
          name = `contract_api_${preparedNames.size + 1}`;
          preparedNames.set(text, name);
        }
        return (prepared = { name, text });
      };
      let announced: boolean | undefined;
      const query_ = async (args: Args) => {
        const config: pg.QueryArrayConfig = { ...preparedStatement(), values: compiled().bind(args), rowMode: 'array' };
        announced ??= announcedTables.has(writtenTable(compiled().source) ?? '');
        if (!announced) {
          const result = await failingAsStore(() => runStatement(config));
          return { rows: result.rows as unknown as Row[], rowCount: result.rowCount };
        }
        const frame = context.getStore();
        const inTransaction = frame !== undefined && !frame.transaction.ended;
        // Announced even when the statement fails: it may have run before the failure was reported.
        if (inTransaction) frame.transaction.announced.set(writeNoticeKey, writeNotice);
        try {
          const result = await failingAsStore(() => runStatement(config));
          return { rows: result.rows as unknown as Row[], rowCount: result.rowCount };
        } finally {
          if (!inTransaction) {
            announce(writeNotice);
            tellLocalListeners(writeNotice);
          }
        }
      };
      return {
        rows: async (args) => (await query_(args)).rows,
        row: async (args) => (await query_(args)).rows[0],
        value: async (args) => (await query_(args)).rows[0]?.[0],
        objects: async (args) => (await query_(args)).rows.map((row) => compiled().toObject(row as unknown as unknown[])),
        object: async (args) => {
          const row = (await query_(args)).rows[0];
          return row === undefined ? undefined : compiled().toObject(row as unknown as unknown[]);
        },
        run: async (args) => (await query_(args)).rowCount ?? 0,
      };
    },
    close: () => pool.end(),
  };
}
