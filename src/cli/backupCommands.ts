// `admin backup` and `admin restore`: an online, consistent copy of the SQLite database with its key
// files beside it, and its return after checks. On PostgreSQL both are pg_dump's and pg_restore's job.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CliError, required, type Command, type CommandContext } from './cliCommand.js';

// Loaded only when a command runs, so that --help answers at once.
const modules = {
  betterSqlite3: () => import('better-sqlite3'),
  config: () => import('../config.js'),
  dataFiles: () => import('../dataFiles.js'),
  database: () => import('../store/database.js'),
  journal: () => import('../store/migrationJournal.js'),
  backup: () => import('../store/sqliteBackup.js'),
  secretBox: () => import('../auth/secretBox.js'),
  sealedColumns: () => import('../store/sealedColumns.js'),
  sealedValues: () => import('./sealedValues.js'),
};

/** What the key file of a backup holds. */
interface KeyBundle {
  format: typeof keyBundleFormat;
  createdAt: string;
  /** Each key file of the data directory: name → content. */
  files: Record<string, string>;
}

const keyBundleFormat = 'contract-api-server key files 1';

const pgDumpHelp = [
  'PostgreSQL (DATABASE_URL) is backed up with its own tools, which copy a live database consistently:',
  '  pg_dump --format=custom --file=app.dump "$DATABASE_URL"',
  '  pg_restore --clean --if-exists --no-owner --dbname="$DATABASE_URL" app.dump   (servers and workers stopped)',
  'Keep the shared secrets (SESSION_JWT_SECRET, CURSOR_SECRET, WEBHOOK_SECRET_KEY, OAUTH_COOKIE_SECRET,',
  'OAUTH_SIGNING_JWK) with the dump: without WEBHOOK_SECRET_KEY its webhook secrets and connector tokens do not open.',
].join('\n');

function refuseOnPostgres(context: CommandContext, command: string): void {
  if (context.env.DATABASE_URL) throw new CliError(`${command} works on SQLite only: DATABASE_URL is set.\n${pgDumpHelp}`);
}

const keysFileOf = (file: string, context: CommandContext): string => {
  const given = context.values.keys;
  return typeof given === 'string' && given.trim() !== '' ? path.resolve(given) : `${file}.keys`;
};

export const backupCommands: Command[] = [
  {
    path: ['backup'],
    usage: 'backup --to <file> [--keys <file>]',
    summary: 'Copy the SQLite database while servers run (consistent, online), with its key files beside it.',
    help: [
      'Copies the SQLite database at DATABASE_PATH to <file> with SQLite\'s online backup API: one',
      'consistent snapshot holding every transaction committed before the copy began, taken while',
      'servers and workers go on serving and writing (a file copy of app.db can miss what is still in',
      'app.db-wal). The key files of the data directory (session-jwt.key, cursor.key,',
      'webhook-secrets.key, oauth-cookies.key, oauth-signing-key.json and any other *.key) go into',
      '<file>.keys (or --keys <file>), mode 0600 like the copy: without webhook-secrets.key the webhook',
      'signing secrets and connector tokens in the copy cannot be opened. A key given by its environment',
      'variable instead (WEBHOOK_SECRET_KEY, …) is not in a file: keep its value with the backup.',
      'Refuses when <file> or its key file exists, and on PostgreSQL (DATABASE_URL), which pg_dump backs up.',
      'Restore with: npm run admin -- restore --from <file>',
      'JSON: {"database", "keys", "bytes", "keyFiles": [<name>…], "keysFromEnvironment": [<variable>…]}.',
    ].join('\n'),
    options: { to: { type: 'string' }, keys: { type: 'string' } },
    positionals: 0,
    async run(context) {
      refuseOnPostgres(context, 'backup');
      const target = path.resolve(required(context, 'to'));
      const keysTarget = keysFileOf(target, context);
      const source = context.databasePath;
      if (!existsSync(source)) throw new CliError(`No database at ${source} (set DATABASE_PATH to the server's): nothing to back up.`);
      for (const file of [target, keysTarget]) if (existsSync(file)) throw new CliError(`${file} exists; give a new file name (nothing was written).`);
      if (!existsSync(path.dirname(target))) throw new CliError(`The folder ${path.dirname(target)} does not exist.`);
      const [{ default: BetterSqlite3 }, { keyFilesIn }, { backupSqliteDatabase }, { generatedKeyFiles }] = await Promise.all([
        modules.betterSqlite3(),
        modules.dataFiles(),
        modules.backup(),
        modules.config(),
      ]);
      const dataDirectory = path.dirname(source);
      // The keys are read first: a key file that cannot be read must not leave a copy without its keys.
      const keyFiles = keyFilesIn(dataDirectory);
      const bundle: KeyBundle = {
        format: keyBundleFormat,
        createdAt: new Date(context.now()).toISOString(),
        files: Object.fromEntries(keyFiles.map((name) => [name, readFileSync(path.join(dataDirectory, name), 'utf8')])),
      };
      const db = new BetterSqlite3(source, { fileMustExist: true });
      let bytes: number;
      try {
        db.pragma('busy_timeout = 5000');
        ({ bytes } = await backupSqliteDatabase(db, target));
      } finally {
        db.close();
      }
      writeFileSync(keysTarget, `${JSON.stringify(bundle, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
      const keysFromEnvironment = generatedKeyFiles.filter((key) => context.env[key.variable]?.trim()).map((key) => key.variable);
      return {
        json: { database: target, keys: keysTarget, bytes, keyFiles, keysFromEnvironment },
        text: [
          `Copied ${source} to ${target} (${bytes} bytes, mode 0600).`,
          `Key files (${keyFiles.length}) in ${keysTarget} (mode 0600): ${keyFiles.join(', ') || 'none'}.`,
          'Keep both together, and away from the server: they hold every secret of this deployment.',
          ...(keysFromEnvironment.length > 0 ? [`Set in the environment, not in a file, so not copied: ${keysFromEnvironment.join(', ')}. Keep their values with the backup.`] : []),
        ].join('\n'),
      };
    },
  },
  {
    path: ['restore'],
    usage: 'restore --from <file> [--keys <file>]',
    summary: 'Put a backup back in place of the SQLite database, after checking it; servers must be stopped.',
    help: [
      'Checks the copy made by `admin backup` before anything is replaced, and refuses it when:',
      '  - PRAGMA integrity_check finds damage;',
      '  - it is no database of this server, or was migrated by a newer version (older ones are',
      '    migrated at the next start, with BACKUP_BEFORE_MIGRATE\'s copy first);',
      '  - its key file (<file>.keys, or --keys <file>) is missing, or the sealing key in it',
      '    (WEBHOOK_SECRET_KEY when set) does not open, for every sealed column (webhook secrets,',
      '    connector credentials, stored idempotent answers), a value of every key id the copy uses;',
      '  - a server, worker or other process has the database at DATABASE_PATH open: stop them first.',
      'Then the database at DATABASE_PATH (with -wal and -shm) and the key files it replaces are moved to',
      '<data dir>/replaced-<time>/, and the copy and its key files (mode 0600) take their place.',
      'Refuses on PostgreSQL (DATABASE_URL), which pg_restore restores.',
      'JSON: {"database", "replaced": <folder> | null, "keyFiles": [<name>…], "pendingMigrations": [<migration>…], "sealedValuesChecked": [{"column", "keyId"}…]}.',
    ].join('\n'),
    options: { from: { type: 'string' }, keys: { type: 'string' } },
    positionals: 0,
    async run(context) {
      refuseOnPostgres(context, 'restore');
      const source = path.resolve(required(context, 'from'));
      const keysSource = keysFileOf(source, context);
      if (!existsSync(source)) throw new CliError(`No backup at ${source}.`);
      if (!existsSync(keysSource)) {
        throw new CliError(`No key file at ${keysSource} (give it with --keys): the database's sealed secrets cannot be opened without it. Nothing was replaced.`);
      }
      const bundle = readKeyBundle(keysSource);
      const target = context.databasePath;
      const dataDirectory = path.dirname(target);
      mkdirSync(dataDirectory, { recursive: true, mode: 0o700 });
      const stamp = new Date(context.now()).toISOString().replace(/[:.]/g, '-');
      const staging = `${target}.restoring-${stamp}`;
      const stagingKeys = path.join(dataDirectory, `.restoring-keys-${stamp}`);
      try {
        // What is checked is what is put in place: a copy of the backup, in the data directory.
        const [{ default: BetterSqlite3 }, { backupSqliteDatabase }] = await Promise.all([modules.betterSqlite3(), modules.backup()]);
        const backup = new BetterSqlite3(source, { readonly: true, fileMustExist: true });
        try {
          await backupSqliteDatabase(backup, staging);
        } catch (error) {
          throw new CliError(`${source} is not a readable SQLite database (${error instanceof Error ? error.message : String(error)}). Nothing was replaced.`);
        } finally {
          backup.close();
        }
        mkdirSync(stagingKeys, { mode: 0o700 });
        for (const [name, content] of Object.entries(bundle.files)) writeFileSync(path.join(stagingKeys, name), content, { mode: 0o600, flag: 'wx' });
        const checked = await checkCopy(staging, stagingKeys, context).catch((error: unknown) => {
          const code = (error as { code?: unknown } | null)?.code;
          if (typeof code === 'string' && /^SQLITE_(CORRUPT|NOTADB)/.test(code)) {
            throw new CliError(`The backup is damaged (${error instanceof Error ? error.message : code}). Nothing was replaced.`);
          }
          throw error;
        });

        const replaced = await moveAsideCurrent(target, Object.keys(bundle.files), path.join(dataDirectory, `replaced-${stamp}`));
        renameSync(staging, target);
        for (const name of Object.keys(bundle.files)) renameSync(path.join(stagingKeys, name), path.join(dataDirectory, name));
        const keyFiles = Object.keys(bundle.files).sort();
        return {
          json: { database: target, replaced, keyFiles, ...checked },
          text: [
            `Restored ${source} to ${target} with its key files (${keyFiles.join(', ') || 'none'}).`,
            replaced ? `The database and key files it replaced are in ${replaced}.` : 'There was no database there before.',
            checked.sealedValuesChecked.length > 0
              ? `The sealing key opens a value of every key id in the copy (${checked.sealedValuesChecked.map(({ column, keyId }) => `${column} ${keyId}`).join(', ')}).`
              : 'The copy holds no sealed value to try the sealing key on.',
            checked.pendingMigrations.length > 0
              ? `It lacks ${checked.pendingMigrations.length} migration(s) of this version (${checked.pendingMigrations.join(', ')}): the next start applies them.`
              : 'Its schema is this version\'s.',
          ].join('\n'),
        };
      } finally {
        for (const suffix of ['', '-journal', '-wal', '-shm']) rmSync(`${staging}${suffix}`, { force: true });
        rmSync(stagingKeys, { recursive: true, force: true });
      }
    },
  },
];

function readKeyBundle(file: string): KeyBundle {
  let bundle: Partial<KeyBundle>;
  try {
    bundle = JSON.parse(readFileSync(file, 'utf8')) as Partial<KeyBundle>;
  } catch {
    throw new CliError(`${file} is not a key file written by admin backup. Nothing was replaced.`);
  }
  const files = bundle.files;
  if (bundle.format !== keyBundleFormat || typeof files !== 'object' || files === null || Object.entries(files).some(([name, content]) => typeof content !== 'string' || name !== path.basename(name) || name.startsWith('.'))) {
    throw new CliError(`${file} is not a key file written by admin backup. Nothing was replaced.`);
  }
  return bundle as KeyBundle;
}

/** Integrity, migrations and keys of the staged copy; throws CliError naming what is wrong. */
async function checkCopy(
  staging: string,
  stagingKeys: string,
  context: CommandContext,
): Promise<{ pendingMigrations: string[]; sealedValuesChecked: Array<{ column: string; keyId: string }> }> {
  const [
    { default: BetterSqlite3 },
    { lastAppliedMigrationMillis, migrationsFolder },
    { migrationsAfter, newestMigrationMillis },
    { loadSealingBox },
    { sealedColumnNames },
    { checkKeysOpenEverySealedKeyId, countSealedByKeyId },
  ] = await Promise.all([modules.betterSqlite3(), modules.database(), modules.journal(), modules.secretBox(), modules.sealedColumns(), modules.sealedValues()]);
  const db = new BetterSqlite3(staging, { readonly: true, fileMustExist: true });
  try {
    const integrity = db.pragma('integrity_check') as { integrity_check: string }[];
    if (integrity.length !== 1 || integrity[0]!.integrity_check !== 'ok') {
      throw new CliError(`The backup is damaged (PRAGMA integrity_check: ${integrity.slice(0, 3).map((row) => row.integrity_check).join('; ')}). Nothing was replaced.`);
    }
    const last = lastAppliedMigrationMillis(db);
    if (last === null) throw new CliError('The backup is no database of this server (it has no migrations table). Nothing was replaced.');
    if (last > newestMigrationMillis(migrationsFolder)) {
      throw new CliError('The backup was migrated by a newer version of this server than this one: restore it with that version. Nothing was replaced.');
    }
    const pendingMigrations = migrationsAfter(migrationsFolder, last);
    // Every key id that sealed a value of the copy, in every sealed column it has, must open with the restored keys.
    const columns = sealedColumnNames.filter((column) => {
      const [table, name] = column.split('.') as [string, string];
      return (db.prepare('SELECT name FROM pragma_table_info(?)').all(table) as { name: string }[]).some((row) => row.name === name);
    });
    const webhookSecretKey = context.env.WEBHOOK_SECRET_KEY?.trim() || undefined;
    const keySource = webhookSecretKey ? 'WEBHOOK_SECRET_KEY' : 'webhook-secrets.key of the key file';
    if (!webhookSecretKey && !existsSync(path.join(stagingKeys, 'webhook-secrets.key'))) {
      const counts = await countSealedByKeyId(db, columns);
      if (columns.some((column) => Object.keys(counts[column]!).length > 0)) {
        throw new CliError('The key file holds no webhook-secrets.key and WEBHOOK_SECRET_KEY is not set: the sealed secrets of the backup cannot be opened. Nothing was replaced.');
      }
      return { pendingMigrations, sealedValuesChecked: [] };
    }
    const checked = await checkKeysOpenEverySealedKeyId(db, loadSealingBox({ webhookSecretKey, dataDirectory: stagingKeys }), columns, keySource);
    return { pendingMigrations, sealedValuesChecked: checked.map(({ column, keyId }) => ({ column, keyId })) };
  } finally {
    db.close();
  }
}

/**
 * Moves the database at `target` (with -wal, -shm) and the named key files into `folder`, after
 * making sure no process has the database open: in exclusive locking mode SQLite cannot get its
 * lock while another connection (a server, a worker) has the file open, even an idle one.
 * Returns the folder, or null when there was nothing to move.
 */
async function moveAsideCurrent(target: string, keyNames: string[], folder: string): Promise<string | null> {
  const [{ default: BetterSqlite3 }, { databaseFiles, keyFilesIn }] = await Promise.all([modules.betterSqlite3(), modules.dataFiles()]);
  const dataDirectory = path.dirname(target);
  if (existsSync(target)) {
    const db = new BetterSqlite3(target, { fileMustExist: true });
    try {
      db.pragma('busy_timeout = 0');
      db.pragma('locking_mode = EXCLUSIVE');
      db.exec('BEGIN EXCLUSIVE; COMMIT');
    } catch (error) {
      if ((error as { code?: unknown }).code === 'SQLITE_BUSY') {
        throw new CliError(`Another process has ${target} open: stop every server and worker on it, then restore again. Nothing was replaced.`);
      }
      throw error;
    } finally {
      db.close();
    }
  }
  const toMove = [...databaseFiles(target), ...new Set([...keyNames, ...keyFilesIn(dataDirectory)].map((name) => path.join(dataDirectory, name)).filter((file) => existsSync(file)))];
  if (toMove.length === 0) return null;
  mkdirSync(folder, { mode: 0o700 });
  for (const file of toMove) renameSync(file, path.join(folder, path.basename(file)));
  return folder;
}
