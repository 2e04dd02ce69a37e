// What can refuse a start, asked before anything is written: a start that cannot succeed must not
// migrate a database or load demo data first (the demo's keys are printed only once, by the start
// that loads them). Each check reads only; openStore (migrations) and the demo load come after.
import { chmodSync, existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { ConfigError, postgresUrlForDisplay, type Config } from './config.js';
import { missingHandlerFiles } from './contract/pipeline.js';
import { databaseFiles, keyFilesIn } from './dataFiles.js';
import { projectFile } from './projectFiles.js';

/** Each API's served contract and where its handlers are (beside this file: src/ under tsx, .cache/transpiled-sources/<key>/src/ under npm start, dist/src/ compiled). */
const apis = [
  { name: 'portfolio', operations: new URL('./portfolio/operations/', import.meta.url) },
  { name: 'work-platform', operations: new URL('./workPlatform/operations/', import.meta.url) },
] as const;

/** Every operationId of every API has its handler file; throws naming each one missing. */
export function checkHandlerFiles(): void {
  const missing: string[] = [];
  for (const api of apis) {
    const document = JSON.parse(readFileSync(projectFile(`generated/${api.name}/openapi.json`), 'utf8')) as { paths?: Record<string, Record<string, { operationId?: unknown }>> };
    const operationIds = Object.values(document.paths ?? {}).flatMap((item) =>
      Object.values(item).flatMap((operation) => (typeof operation === 'object' && operation && typeof operation.operationId === 'string' ? [operation.operationId] : [])),
    );
    missing.push(...missingHandlerFiles(api.operations, operationIds));
  }
  if (missing.length > 0) {
    throw new Error(`${missing.join('; ')}. Nothing was changed: the database was neither created nor migrated.`);
  }
}

/** ALLOW_DEMO_DATA_IN_PRODUCTION's text, for every refusal and warning. */
const DEMO_CREDENTIALS_ARE_PUBLIC =
  'the demo data set has fixed ids and an OAuth client and webhook anyone can read in this repository (ocl_demoNorthwindCli, whk_Q7mXc2VbN9pLr4TzK8sD)';

/** DEMO_DATA=on in production: refused unless the operator confirmed it. Throws ConfigError. */
export function checkDemoDataSetting(config: Config): void {
  if (config.production && config.loadDemoData && !config.allowDemoDataInProduction) {
    throw new ConfigError(
      `NODE_ENV=production with DEMO_DATA=on: ${DEMO_CREDENTIALS_ARE_PUBLIC}. Unset DEMO_DATA, or confirm with ALLOW_DEMO_DATA_IN_PRODUCTION=on (a demo or a benchmark, never real users).`,
    );
  }
}

/** A database holding demo records in production: refused unless the operator confirmed it. Throws ConfigError. */
export function checkDemoRecords(config: Config, holdsDemoRecords: boolean, location: string): void {
  if (config.production && holdsDemoRecords && !config.allowDemoDataInProduction) {
    throw new ConfigError(
      `NODE_ENV=production on a database that holds demo records (${location}): ${DEMO_CREDENTIALS_ARE_PUBLIC}, and tokens issued for them may be known. ` +
        'Start on a database without them, or confirm with ALLOW_DEMO_DATA_IN_PRODUCTION=on (a demo or a benchmark, never real users).',
    );
  }
}

/**
 * Demo data in production, asked for (DEMO_DATA=on) or already in the database: refused unless
 * ALLOW_DEMO_DATA_IN_PRODUCTION confirms it (throws ConfigError). Reads only, before the store is
 * opened, migrated or loaded; on PostgreSQL it also finds an unreachable server. The one check of
 * every entry point that serves the database: npm start and npm run worker.
 */
export async function checkDemoDataInProduction(config: Config): Promise<{ holdsDemoRecords: boolean }> {
  checkDemoDataSetting(config);
  const holdsDemoRecords = config.postgres
    ? (await checkPostgres(config.postgres.url, config.postgres.connectTimeoutMs)).holdsDemoRecords
    : sqliteHoldsDemoRecords(config.databasePath);
  checkDemoRecords(config, holdsDemoRecords, config.postgres ? postgresUrlForDisplay(config.postgres.url) : config.databasePath);
  return { holdsDemoRecords };
}

/** The loud line of a production start that serves demo data because the operator confirmed it. */
export function demoInProductionWarning(): string {
  return `WARNING: NODE_ENV=production serves the demo data set (ALLOW_DEMO_DATA_IN_PRODUCTION=on): ${DEMO_CREDENTIALS_ARE_PUBLIC}. Never let real users near this server.`;
}

/**
 * The fixed ids of the demo data set (src/demo/demoData.ts and workPlatformDemo.ts; a test keeps
 * them equal), written out so that a start does not load the demo importer to ask.
 */
export const demoRecordQueries: readonly { table: string; ids: readonly string[] }[] = [
  { table: 'tenants', ids: ['ten_demoAvaMoreno', 'ten_demoJonasFeld', 'ten_demoPriyaRaman'] },
  { table: 'workspaces', ids: ['ten_demoNorthwindStudio', 'ten_demoHarborLabs'] },
  { table: 'oauth_clients', ids: ['ocl_demoNorthwindCli'] },
  { table: 'webhook_subscriptions', ids: ['whk_Q7mXc2VbN9pLr4TzK8sD'] },
];

/**
 * Whether the SQLite file holds any demo record, read without creating or migrating it: false for a
 * file that does not exist yet or has no tables.
 */
export function sqliteHoldsDemoRecords(path: string): boolean {
  if (path === ':memory:' || !existsSync(path)) return false;
  const db = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    return demoRecordQueries.some(({ table, ids }) => {
      if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table)) return false;
      return db.prepare(`SELECT 1 FROM ${table} WHERE id IN (${ids.map(() => '?').join(', ')}) LIMIT 1`).get(...ids) !== undefined;
    });
  } finally {
    db.close();
  }
}

/**
 * PostgreSQL answers (one connection, `SELECT 1`), and whether the database holds any demo record;
 * nothing is created or migrated.
 */
export async function checkPostgres(url: string, connectTimeoutMs: number): Promise<{ holdsDemoRecords: boolean }> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs, application_name: 'contract-api-server start check' });
  // An error after connecting (the server going away) must not end the process: the query fails instead.
  client.on('error', () => undefined);
  await client.connect();
  try {
    let holdsDemoRecords = false;
    for (const { table, ids } of demoRecordQueries) {
      const { rows } = await client.query<{ present: boolean }>(
        `SELECT to_regclass($1) IS NOT NULL AS present`,
        [`public.${table}`],
      );
      if (!rows[0]?.present) continue;
      const found = await client.query(`SELECT 1 FROM ${table} WHERE id = ANY($1) LIMIT 1`, [[...ids]]);
      if ((found.rowCount ?? 0) > 0) {
        holdsDemoRecords = true;
        break;
      }
    }
    return { holdsDemoRecords };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The data directory, the SQLite database (with -wal and -shm) and the key files must be the
 * owner's alone: they hold token hashes, sealed secrets and the keys that open them. Files are only
 * created that way; one restored, copied or made by hand may not be. Any group or other permission
 * refuses the start (ConfigError naming each file), or with FIX_FILE_MODES=on is removed; returns
 * what was changed, for the start to say so.
 */
export function checkFileModes(config: Pick<Config, 'dataDirectory' | 'databasePath' | 'postgres' | 'fixFileModes'>): { file: string; from: number; to: number }[] {
  const files = [
    ...(existsSync(config.dataDirectory) ? [config.dataDirectory] : []),
    ...(config.postgres ? [] : databaseFiles(config.databasePath)),
    ...keyFilesIn(config.dataDirectory).map((name) => path.join(config.dataDirectory, name)),
  ];
  // Files: owner-only. The directory: no one else may write it (replace a file); listing or entering it
  // (0755, what a plain mkdir makes) shows names, never contents, so it is allowed.
  const open = files.flatMap((file) => {
    // Another process on the same file (a second server, the admin CLI) removes -wal and -shm when its last connection
    // closes: a file gone since it was listed has no mode to check.
    const stats = statSync(file, { throwIfNoEntry: false });
    if (!stats) return [];
    const mode = stats.mode & 0o777;
    const forbidden = file === config.dataDirectory ? 0o022 : 0o077;
    return mode & forbidden ? [{ file, from: mode, to: mode & 0o700 }] : [];
  });
  if (open.length === 0) return [];
  if (!config.fixFileModes) {
    throw new ConfigError(
      `group or others may access ${open.map(({ file, from }) => `${file} (mode ${octal(from)})`).join(', ')}: ` +
        'they hold token hashes, sealed secrets and the keys that open them. Make the files the owner\'s alone (chmod 600) ' +
        `and the directory writable by its owner only (chmod 700 ${config.dataDirectory}), or start once with FIX_FILE_MODES=on to have it done. Nothing was changed.`,
    );
  }
  for (const { file, to } of open) {
    try {
      chmodSync(file, to);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return open;
}

const octal = (mode: number): string => `0${mode.toString(8).padStart(3, '0')}`;

/** The start's line about the modes it fixed (FIX_FILE_MODES=on). */
export function fixedFileModesNotice(fixed: { file: string; from: number; to: number }[]): string {
  return `FIX_FILE_MODES=on: made owner-only ${fixed.map(({ file, from, to }) => `${file} (${octal(from)} -> ${octal(to)})`).join(', ')}.`;
}
