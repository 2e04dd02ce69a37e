// The two engines a store suite runs on: a SQLite file in a temporary folder, and a database of its
// own on the run's one real PostgreSQL server (test/support/postgresServer.ts), migrated. A suite
// written once as `describe.each(storeEngines)` proves the same behaviour on both.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/store/database.js';
import { postgresEngine, sqliteEngine, type PostgresEngineOptions, type StoreEngine } from '../../src/store/engine.js';
import { openPostgres } from '../../src/store/postgres.js';
import { sharedPostgresServer } from './postgresServer.js';

export interface OpenedEngine {
  engine: StoreEngine;
  /** Another engine on the same data, as a second instance of the app would have (SQLite: a second connection to the file). */
  openAnother(): Promise<StoreEngine>;
  close(): Promise<void>;
}

export interface EngineCase {
  name: 'SQLite' | 'PostgreSQL';
  open(options?: PostgresEngineOptions): Promise<OpenedEngine>;
}

export const sqliteCase: EngineCase = {
  name: 'SQLite',
  async open() {
    const directory = mkdtempSync(path.join(tmpdir(), 'engine-'));
    const file = path.join(directory, 'app.db');
    const connections = [openDatabase(file)];
    return {
      engine: sqliteEngine(connections[0]!),
      async openAnother() {
        const connection = openDatabase(file);
        connections.push(connection);
        return sqliteEngine(connection);
      },
      async close() {
        for (const connection of connections) connection.close();
        rmSync(directory, { recursive: true, force: true });
      },
    };
  },
};

export const postgresCase: EngineCase = {
  name: 'PostgreSQL',
  async open(options) {
    const url = await (await sharedPostgresServer()).createDatabase({ migrated: true });
    const engines: StoreEngine[] = [];
    const openOne = async () => {
      const database = await openPostgres(url, { poolMax: 4 });
      const engine = postgresEngine(database.pool, options);
      engines.push(engine);
      return engine;
    };
    return {
      engine: await openOne(),
      openAnother: openOne,
      async close() {
        await Promise.all(engines.map((engine) => engine.close()));
      },
    };
  },
};

export const storeEngines: EngineCase[] = [sqliteCase, postgresCase];
