import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isDatabaseBusy, openDatabase, runInImmediateTransaction } from '../../src/store/database.js';
import { sqliteWriteTransactions, type WriteTransactions } from '../../src/store/writeTransactions.js';

describe('SQLite write transactions across awaits', () => {
  let directory: string;
  let db: BetterSqlite3.Database;
  let transactions: WriteTransactions;
  const count = () => db.prepare('SELECT count(*) FROM notes').pluck().get() as number;
  const insert = (text: string) => db.prepare('INSERT INTO notes (text) VALUES (?)').run(text);

  beforeEach(() => {
    directory = mkdtempSync(path.join(tmpdir(), 'write-transactions-'));
    db = openDatabase(path.join(directory, 'app.db'));
    db.exec('CREATE TABLE notes (text TEXT NOT NULL)');
    transactions = sqliteWriteTransactions(db);
  });
  afterEach(() => {
    db.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('is one runner per connection', () => {
    expect(sqliteWriteTransactions(db)).toBe(transactions);
  });

  it('commits what the change wrote across its awaits and answers its result', async () => {
    const result = await transactions.write(async () => {
      insert('a');
      await Promise.resolve();
      insert('b');
      return 'done';
    });
    expect(result).toBe('done');
    expect(count()).toBe(2);
    expect(db.inTransaction).toBe(false);
  });

  it('rolls back everything, nested writes and synchronous store transactions included, when the change throws', async () => {
    await expect(
      transactions.write(async () => {
        insert('a');
        await transactions.write(async () => insert('nested'));
        runInImmediateTransaction(db, () => insert('synchronous, nested as a savepoint'));
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(count()).toBe(0);
    expect(db.inTransaction).toBe(false);
  });

  it('undoes only a nested change that throws when the outer change goes on', async () => {
    await transactions.write(async () => {
      insert('kept');
      await transactions
        .write(async () => {
          insert('undone');
          await Promise.resolve();
          throw new Error('nested refusal');
        })
        .catch(() => undefined);
      await transactions.write(() => insert('kept too'));
    });
    expect(db.prepare('SELECT text FROM notes ORDER BY rowid').pluck().all()).toEqual(['kept', 'kept too']);
  });

  it('refuses two nested changes at once inside one transaction (they would release each other\'s savepoints), and rolls back', async () => {
    const change = (text: string) => transactions.write(async () => {
      insert(text);
      await new Promise((resolve) => setImmediate(resolve));
    });
    let first: Promise<unknown> | undefined;
    await expect(
      transactions.write(() => {
        first = change('one');
        return Promise.all([first, change('two')]);
      }),
    ).rejects.toThrow(/two changes ran at once/);
    // The change that was still running finds its transaction ended and touches nothing after it.
    await expect(first).rejects.toThrow(/already ended/);
    expect(count()).toBe(0);
    await transactions.write(async () => {
      await change('one');
      await change('two');
    });
    expect(count()).toBe(2);
  });

  it('runs the transactions of concurrent contexts one after the other, never interleaved', async () => {
    const order: string[] = [];
    const change = (name: string) => async () => {
      order.push(`${name} begins`);
      insert(name);
      await new Promise((resolve) => setImmediate(resolve));
      order.push(`${name} ends`);
    };
    await Promise.all([transactions.write(change('first')), transactions.write(change('second')), transactions.write(change('third'))]);
    expect(order).toEqual(['first begins', 'first ends', 'second begins', 'second ends', 'third begins', 'third ends']);
    expect(count()).toBe(3);
  });

  it('makes a read from another context wait until the open transaction has ended; inside, reads run at once', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const writing = transactions.write(async () => {
      insert('uncommitted');
      expect(transactions.readable()).toBeUndefined();
      await held;
      throw new Error('rolled back');
    });
    await new Promise((resolve) => setImmediate(resolve));
    const wait = transactions.readable();
    expect(wait).toBeInstanceOf(Promise);
    let readAfterWait: number | undefined;
    const reading = wait!.then(() => (readAfterWait = count()));
    release();
    await expect(writing).rejects.toThrow('rolled back');
    await reading;
    expect(readAfterWait).toBe(0);
    expect(transactions.readable()).toBeUndefined();
  });

  it('refuses a synchronous write transaction of another context while one is open, as busy, so that it is retried rather than nested', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const writing = transactions.write(async () => {
      insert('mine');
      await held;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(transactions.heldElsewhere()).toBe(true);
    let refusal: unknown;
    try {
      runInImmediateTransaction(db, () => insert('theirs'));
    } catch (error) {
      refusal = error;
    }
    expect(isDatabaseBusy(refusal)).toBe(true);
    release();
    await writing;
    expect(transactions.heldElsewhere()).toBe(false);
    runInImmediateTransaction(db, () => insert('theirs, retried'));
    expect(db.prepare('SELECT text FROM notes ORDER BY rowid').pluck().all()).toEqual(['mine', 'theirs, retried']);
  });

  it('passes SQLite busy through when another process holds the write lock, and leaves the queue usable', async () => {
    const other = openDatabase(path.join(directory, 'app.db'), { busyTimeoutMs: 1 });
    db.pragma('busy_timeout = 1');
    try {
      other.exec('BEGIN IMMEDIATE');
      let refusal: unknown;
      await transactions.write(() => insert('blocked')).catch((error: unknown) => (refusal = error));
      expect(isDatabaseBusy(refusal)).toBe(true);
      other.exec('ROLLBACK');
      await transactions.write(() => insert('after'));
      expect(count()).toBe(1);
    } finally {
      other.close();
    }
  });
});
