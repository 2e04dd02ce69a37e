// The engines raise one typed error for an engine that cannot be reached, whatever the driver said.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { asStoreUnavailable } from '../../src/store/database.js';
import { isEngineUnreachable, StoreUnavailableError } from '../../src/store/errors.js';
import { postgresEngine } from '../../src/store/engine.js';
import { tasks, tenants } from '../../db/schema.js';
import { drizzleFor } from '../../src/store/drizzle.js';
import BetterSqlite3 from 'better-sqlite3';
import { setTimeout as wait } from 'node:timers/promises';
import { openPostgres } from '../../src/store/postgres.js';
import { sharedPostgresServer, withClient } from '../support/postgresServer.js';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isEngineUnreachable', () => {
  it.each([
    ['57P01 admin_shutdown', withCode('57P01')],
    ['57P02 crash_shutdown', withCode('57P02')],
    ['57P03 cannot_connect_now', withCode('57P03')],
    ['08006 connection_failure', withCode('08006')],
    ['08001 sqlclient_unable_to_establish_sqlconnection', withCode('08001')],
    ['ECONNREFUSED', withCode('ECONNREFUSED')],
    ['ECONNRESET', withCode('ECONNRESET')],
    ['a pool that found no connection in time', new Error('timeout exceeded when trying to connect')],
    ['a connection lost under a query', new Error('Connection terminated unexpectedly')],
    ['SQLITE_CANTOPEN', withCode('SQLITE_CANTOPEN')],
    ['SQLITE_IOERR_READ', withCode('SQLITE_IOERR_READ')],
    ['every address refused', new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')])],
  ])('%s: unreachable', (_, error) => {
    expect(isEngineUnreachable(error)).toBe(true);
    expect(asStoreUnavailable(error)?.reason).toBe('unreachable');
  });

  it.each([
    ['a unique violation', withCode('23505')],
    ['a syntax error', withCode('42601')],
    ['SQLITE_CONSTRAINT', withCode('SQLITE_CONSTRAINT_UNIQUE')],
    ['a plain error', new Error('boom')],
  ])('%s: not unreachable, and not unavailable', (_, error) => {
    expect(isEngineUnreachable(error)).toBe(false);
    expect(asStoreUnavailable(error)).toBeUndefined();
  });

  it('busy codes are unavailable as busy', () => {
    expect(asStoreUnavailable(withCode('SQLITE_BUSY'))?.reason).toBe('busy');
    expect(asStoreUnavailable(withCode('40001'))?.reason).toBe('busy');
  });
});

describe('the PostgreSQL engine with nothing listening', () => {
  it('raises StoreUnavailableError (unreachable) from statements and transactions', async () => {
    const pool = new pg.Pool({ connectionString: 'postgres://app@127.0.0.1:9/app', connectionTimeoutMillis: 1000 });
    const engine = postgresEngine(pool);
    const orm = drizzleFor(new BetterSqlite3(':memory:'));
    try {
      const statement = engine.statement(orm.select({ id: tasks.id }).from(tasks));
      const fromStatement = await statement.rows({}).catch((error: unknown) => error);
      expect(fromStatement).toBeInstanceOf(StoreUnavailableError);
      expect((fromStatement as StoreUnavailableError).reason).toBe('unreachable');
      const fromWrite = await engine.write(async () => 1).catch((error: unknown) => error);
      expect(fromWrite).toBeInstanceOf(StoreUnavailableError);
    } finally {
      await engine.close();
    }
  });
});

describe('the PostgreSQL engine when the server ends a connection inside a transaction', () => {
  it('raises StoreUnavailableError from the next statement, and the process goes on (no unhandled error event)', async () => {
    const url = await (await sharedPostgresServer()).createDatabase({ migrated: true });
    const database = await openPostgres(url, { poolMax: 2 });
    const engine = postgresEngine(database.pool, { maxAttempts: 1 });
    const count = engine.statement(engine.orm.select({ id: tenants.id }).from(tenants));
    try {
      const outcome = await engine
        .write(async () => {
          // The transaction's own backend, ended as a restart or a failover ends it (57P01 admin_shutdown), between two statements.
          await count.rows({});
          const [own] = await withClient(url, (other) =>
            other.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction'").then((result) => result.rows),
          );
          expect(own).toBeDefined();
          await withClient(url, (other) => other.query('SELECT pg_terminate_backend($1)', [own!.pid]));
          // pg reports the loss as an 'error' event on the client while no statement runs.
          await wait(200);
          return count.rows({});
        })
        .catch((error: unknown) => error);
      expect(outcome).toBeInstanceOf(StoreUnavailableError);
      // The pool made a new connection for the next call.
      expect(await engine.write(() => count.rows({}))).toEqual([]);
    } finally {
      await engine.close();
    }
  });
});
