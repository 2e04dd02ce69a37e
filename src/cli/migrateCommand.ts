// `admin migrate`: creates the schema of an empty database or brings an existing one up to date,
// on SQLite (DATABASE_PATH) or PostgreSQL (DATABASE_URL), and says which migrations it applied.
// The server does the same at start; this lets an operator migrate before starting new code.
import { existsSync } from 'node:fs';
import { CliError, type Command } from './cliCommand.js';

// Loaded only when the command runs, so that --help answers at once.
const modules = {
  config: () => import('../config.js'),
  sqlite: () => import('../store/database.js'),
  postgres: () => import('../store/postgres.js'),
  journal: () => import('../store/migrationJournal.js'),
  betterSqlite3: () => import('better-sqlite3'),
};

export const migrateCommand: Command = {
  path: ['migrate'],
  usage: 'migrate',
  summary: 'Create or bring up to date the database schema (SQLite at DATABASE_PATH, or PostgreSQL at DATABASE_URL).',
  help: [
    'Applies the migrations the database lacks, in order, and prints their names, or that it was up',
    'to date. An empty or missing database gets the whole schema. With DATABASE_URL set',
    '(postgres://…) it migrates that PostgreSQL database (db/postgres/migrations, under an advisory',
    'lock: several processes may run it at once); otherwise the SQLite file at DATABASE_PATH',
    '(db/migrations), created if missing. npm start migrates SQLite at start as well.',
    'The password of DATABASE_URL is never printed.',
    'JSON: {"engine": "sqlite" | "postgresql", "database", "applied": [<migration>…], "upToDate"}.',
  ].join('\n'),
  options: {},
  positionals: 0,
  async run(context) {
    const { postgresConfig, postgresUrlForDisplay, ConfigError } = await modules.config();
    let postgres;
    try {
      postgres = postgresConfig(context.env);
    } catch (error) {
      if (error instanceof ConfigError) throw new CliError(error.message);
      throw error;
    }
    let engine: 'sqlite' | 'postgresql';
    let database: string;
    let applied: string[];
    if (postgres) {
      engine = 'postgresql';
      database = postgresUrlForDisplay(postgres.url);
      const { openPostgres } = await modules.postgres();
      try {
        const opened = await openPostgres(postgres.url, { poolMax: 1, connectTimeoutMs: postgres.connectTimeoutMs, statementTimeoutMs: postgres.statementTimeoutMs });
        applied = opened.appliedMigrations;
        await opened.close();
      } catch (error) {
        throw new CliError(`Cannot migrate PostgreSQL at ${database}: ${error instanceof Error ? error.message : String(error)}`);
      }
    } else {
      engine = 'sqlite';
      database = context.databasePath;
      const [{ migrationsFolder }, { migrationsAfter }] = await Promise.all([modules.sqlite(), modules.journal()]);
      const before = await lastAppliedSqliteMigration(context.databasePath);
      await context.db(); // openDatabase() migrates
      applied = migrationsAfter(migrationsFolder, before);
    }
    const name = engine === 'sqlite' ? `SQLite at ${database}` : `PostgreSQL at ${database}`;
    const text =
      applied.length === 0
        ? `${name} is up to date; no migrations to apply.`
        : [`Applied ${applied.length} ${applied.length === 1 ? 'migration' : 'migrations'} to ${name}:`, ...applied.map((tag) => `  ${tag}`)].join('\n');
    return { json: { engine, database, applied, upToDate: applied.length === 0 }, text };
  },
};

/** The newest migration a SQLite file has (drizzle's __drizzle_migrations.created_at), null when the file or the table is missing; read without changing the file. */
async function lastAppliedSqliteMigration(path: string): Promise<number | null> {
  if (!existsSync(path)) return null;
  const [{ default: BetterSqlite3 }, { lastAppliedMigrationMillis }] = await Promise.all([modules.betterSqlite3(), modules.sqlite()]);
  const db = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
  try {
    return lastAppliedMigrationMillis(db);
  } finally {
    db.close();
  }
}
