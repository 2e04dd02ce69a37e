// How store code runs a change on an engine whose calls may wait: one write transaction that every
// store call made inside it joins, found through the async context rather than passed along. On
// SQLite the statements themselves are synchronous, but a transaction that awaits between them
// stays open across other requests' turns of the event loop on the same connection, so this
// process's transactions take turns (a queue) and reads from outside an open transaction wait for
// it to end: they never see a change that may yet roll back.
import { AsyncLocalStorage } from 'node:async_hooks';
import type BetterSqlite3 from 'better-sqlite3';

export interface WriteTransactions {
  /**
   * Runs `change` in one write transaction and commits it, or rolls everything back when it
   * throws. Called inside another `write`'s `change` (however deep in its awaits), it joins that
   * transaction as a savepoint instead: a nested change that throws undoes only its own writes.
   * SQLite's own busy error passes through: the caller retries the whole change.
   */
  write<T>(change: () => T | Promise<T>): Promise<T>;
  /**
   * Runs `read` in one read transaction (BEGIN DEFERRED: it takes no write lock, so it answers while
   * another process writes) in this connection's queue, so that no change of this process lands
   * between its reads. Inside a write it reads in that transaction.
   */
  snapshot<T>(read: () => T | Promise<T>): Promise<T>;
  /**
   * Undefined when a read may run now; otherwise a promise that settles when it may (another
   * context's transaction is open on the connection). Inside a transaction reads run at once.
   */
  readable(): Promise<void> | undefined;
  /** Whether a transaction of another async context is open now (a synchronous writer must not start one). */
  heldElsewhere(): boolean;
  /** Throws when called from a change whose transaction has already ended: its statement would run outside it. */
  refuseEnded(): void;
  /** See StoreEngine.afterCommit. */
  afterCommit(callback: () => void): void;
}

/** Runs a synchronous read once no other context's transaction is open on the connection (see `readable`). */
export async function readCommitted<T>(transactions: WriteTransactions, read: () => T | Promise<T>): Promise<T> {
  // A queued writer may open a transaction as the last one ends: check again after every wait, and
  // read in the same turn as the check that found none open (a read that awaits must start synchronously).
  for (let wait = transactions.readable(); wait; wait = transactions.readable()) await wait;
  return read();
}

interface OpenTransaction {
  /** Settles when the transaction has committed or rolled back. */
  ended: Promise<void>;
  /** Savepoints open inside it, innermost last: SQLite's savepoints are a stack. */
  savepoints: string[];
  /** Savepoints made so far, for a name never used twice. */
  made: number;
  /** What runs once it has committed. */
  committed: (() => void)[];
}

/** Where an async context stands: in which transaction, inside which of its savepoints (none: at its top). */
interface Frame {
  transaction: OpenTransaction;
  savepoint: string | undefined;
}

const runners = new WeakMap<BetterSqlite3.Database, WriteTransactions>();

/** The connection's one runner: every store on a connection shares its queue. */
export function sqliteWriteTransactions(db: BetterSqlite3.Database): WriteTransactions {
  let runner = runners.get(db);
  if (!runner) {
    runner = createSqliteWriteTransactions(db);
    runners.set(db, runner);
  }
  return runner;
}

function createSqliteWriteTransactions(db: BetterSqlite3.Database): WriteTransactions {
  const context = new AsyncLocalStorage<Frame>();
  let open: OpenTransaction | undefined;
  /** The end of the last transaction queued: each one starts after the one before it ended. */
  let queueEnd: Promise<void> = Promise.resolve();

  const begin = db.prepare('BEGIN IMMEDIATE');
  const beginDeferred = db.prepare('BEGIN DEFERRED');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');

  const insideOpen = () => open !== undefined && context.getStore()?.transaction === open;

  async function write<T>(change: () => T | Promise<T>, start = begin): Promise<T> {
    if (insideOpen()) return joined(context.getStore()!, change);
    let end!: () => void;
    const transaction: OpenTransaction = { ended: new Promise<void>((resolve) => (end = resolve)), savepoints: [], made: 0, committed: [] };
    const before = queueEnd;
    queueEnd = transaction.ended;
    await before;
    open = transaction;
    try {
      // IMMEDIATE takes SQLite's write lock before the first read (waiting up to the busy timeout for another process).
      start.run();
      try {
        const result = await context.run({ transaction, savepoint: undefined }, change);
        commit.run();
        for (const callback of transaction.committed) setImmediate(callback);
        return result;
      } catch (error) {
        if (db.inTransaction) rollback.run();
        throw error;
      }
    } finally {
      open = undefined;
      end();
    }
  }

  async function joined<T>(frame: Frame, change: () => T | Promise<T>): Promise<T> {
    const { transaction } = frame;
    // Two changes of one transaction at once (Promise.all) would release each other's savepoints.
    if (transaction.savepoints.at(-1) !== frame.savepoint) {
      throw new Error('two changes ran at once inside one write transaction: await one before starting the next');
    }
    const savepoint = `nested_change_${(transaction.made += 1)}`;
    db.exec(`SAVEPOINT ${savepoint}`);
    transaction.savepoints.push(savepoint);
    // A change still running when its transaction ended (a sibling failed it) must not touch the next one.
    const stillOpen = () => {
      if (open !== transaction) throw new Error('the write transaction this change joined has already ended');
    };
    try {
      const result = await context.run({ transaction, savepoint }, change);
      stillOpen();
      db.exec(`RELEASE ${savepoint}`);
      return result;
    } catch (error) {
      if (open === transaction && db.inTransaction) db.exec(`ROLLBACK TO ${savepoint}; RELEASE ${savepoint}`);
      throw error;
    } finally {
      if (open === transaction) transaction.savepoints.pop();
    }
  }

  return {
    write: (change) => write(change),
    snapshot: (read) => (insideOpen() ? Promise.resolve().then(read) : write(read, beginDeferred)),
    readable: () => (open === undefined || insideOpen() ? undefined : waitUntilNoneOpen()),
    heldElsewhere: () => open !== undefined && !insideOpen(),
    afterCommit: (callback) => {
      const frame = context.getStore();
      if (frame !== undefined && frame.transaction === open) frame.transaction.committed.push(callback);
      else setImmediate(callback);
    },
    refuseEnded: () => {
      const frame = context.getStore();
      if (frame !== undefined && frame.transaction !== open) throw new Error('the write transaction this statement belongs to has already ended');
    },
  };

  async function waitUntilNoneOpen(): Promise<void> {
    while (open !== undefined) await open.ended;
  }
}
