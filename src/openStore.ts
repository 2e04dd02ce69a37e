// Start-up's one way to the data: the engine the configuration selects — PostgreSQL when
// DATABASE_URL is set, else the SQLite file at DATABASE_PATH — opened, migrated and ready.
import type BetterSqlite3 from 'better-sqlite3';
import { postgresUrlForDisplay, type Config } from './config.js';
import type { Logger } from './logger.js';
import { openDatabase } from './store/database.js';
import { postgresEngine, sqliteEngine, type StoreEngine } from './store/engine.js';
import { backupAndMigrate } from './store/sqliteBackup.js';

export interface OpenedStore {
  engine: StoreEngine;
  /** The SQLite connection under the engine; undefined on PostgreSQL. */
  sqlite: BetterSqlite3.Database | undefined;
  /** Where the data is, for banners and logs: the SQLite path, or the PostgreSQL URL with its password masked. */
  location: string;
  /** The copy of the SQLite file taken before this open applied migrations to it (BACKUP_BEFORE_MIGRATE); undefined when none was due. */
  migrationBackup?: string;
  close(): Promise<void>;
}

export async function openStore(
  config: Pick<Config, 'postgres' | 'databasePath'> & { databaseBusyTimeoutMs?: number; backupBeforeMigrate?: boolean; migrationsFolder?: string },
  logger?: Logger,
): Promise<OpenedStore> {
  if (config.postgres) {
    const { openPostgres } = await import('./store/postgres.js');
    const location = postgresUrlForDisplay(config.postgres.url);
    const database = await openPostgres(config.postgres.url, {
      poolMax: config.postgres.poolMax,
      connectTimeoutMs: config.postgres.connectTimeoutMs,
      statementTimeoutMs: config.postgres.statementTimeoutMs,
      onIdleConnectionError: (error) => logger?.warn('an idle PostgreSQL connection failed; the pool replaces it', { database: location, error: error.message }),
    });
    const engine = postgresEngine(database.pool);
    let closed: Promise<void> | undefined;
    return { engine, sqlite: undefined, location, migrationBackup: undefined, close: () => (closed ??= engine.close()) };
  }
  // An upgrade of an existing database is copied first, under the migrations' lock: a migration that goes
  // wrong in a way the migrator cannot see (a wrong UPDATE) can then be undone by restoring the copy.
  const migrationBackup = config.backupBeforeMigrate === false ? undefined : await backupAndMigrate(config.databasePath, { migrationsFolder: config.migrationsFolder });
  if (migrationBackup) logger?.info('copied the database before migrating it', { database: config.databasePath, backup: migrationBackup });
  const sqlite = openDatabase(config.databasePath, { busyTimeoutMs: config.databaseBusyTimeoutMs, migrationsFolder: config.migrationsFolder });
  return {
    engine: sqliteEngine(sqlite),
    sqlite,
    location: config.databasePath,
    migrationBackup,
    close: async () => {
      if (sqlite.open) sqlite.close();
    },
  };
}
