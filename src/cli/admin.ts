// The operator's command line: tenants, API keys, portfolio import/export, the Work-Platform's
// workspaces, users, sessions and personal access tokens, OAuth clients, and the demo data set.
// Run as `npm run --silent admin -- <command> [options]`. With --json every command prints exactly
// one JSON object on stdout (errors included) so scripts and tests can parse it.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { OpenedStore } from '../openStore.js';
import { StoreError } from '../store/errors.js';
import { WorkPlatformStoreError } from '../store/workPlatformErrors.js';
import { CliError, iso, parseExpiresAt, required, type Command } from './cliCommand.js';
import { workPlatformCommands, workPlatformGroups } from './workPlatformCommands.js';
import { oauthClientCommands, oauthClientGroups } from './oauthClientCommands.js';
import { migrateCommand } from './migrateCommand.js';
import { secretsCommand } from './secretsCommand.js';
import { backupCommands } from './backupCommands.js';
import { keysCommands, keysGroups } from './keysCommands.js';

export { CliError };

// The database, validation and sanitizing modules load only when a command runs, so that --help
// and usage errors answer at once.
const modules = {
  openStore: () => import('../openStore.js'),
  engine: () => import('../store/engine.js'),
  config: () => import('../config.js'),
  tenants: () => import('../store/tenants.js'),
  apiKeys: () => import('../store/apiKeys.js'),
  issueApiKeys: () => import('../auth/apiKeys.js'),
  portfolioImport: () => import('../portfolio/import/importPortfolio.js'),
  importValidation: () => import('../portfolio/import/validateImport.js'),
  demo: () => import('../demo/demoData.js'),
  startChecks: () => import('../startChecks.js'),
};

export const defaultDatabasePath = 'data/app.db';

const common = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies NonNullable<ParseArgsConfig['options']>;

function parseRateLimit(value: string | boolean | undefined): number | null {
  if (value === undefined) return null;
  if (typeof value !== 'string' || !/^[1-9][0-9]{0,8}$/.test(value)) {
    throw new CliError(`--rate-limit must be a positive integer (requests per window); got "${String(value)}".`);
  }
  return Number(value);
}

const commands: Command[] = [
  {
    path: ['tenant', 'create'],
    usage: 'tenant create --name <name>',
    summary: 'Create a tenant.',
    help: 'Creates a tenant and prints its id (ten_…). JSON: {"id"}.',
    options: { name: { type: 'string' } },
    positionals: 0,
    async run(context) {
      const { createTenantStore } = await modules.tenants();
      const { id } = await createTenantStore(await context.db(), { now: context.now }).createTenant(required(context, 'name'));
      return { json: { id }, text: `Created tenant ${id}.` };
    },
  },
  {
    path: ['tenant', 'list'],
    usage: 'tenant list',
    summary: 'List tenants.',
    help: 'Lists every tenant, oldest first. JSON: {"tenants": [{"id", "name", "createdAt"}]}.',
    options: {},
    positionals: 0,
    async run(context) {
      const { createTenantStore } = await modules.tenants();
      const tenants = (await createTenantStore(await context.db()).listTenants()).map((tenant) => ({
        id: tenant.id,
        name: tenant.name,
        createdAt: iso(tenant.createdAt),
      }));
      const text =
        tenants.length === 0
          ? 'No tenants yet. Create one with: tenant create --name <name>'
          : tenants.map((tenant) => `${tenant.id}  ${tenant.createdAt}  ${tenant.name}`).join('\n');
      return { json: { tenants }, text };
    },
  },
  {
    path: ['key', 'create'],
    usage: 'key create --tenant <tenant id> [--expires-at <ISO 8601>] [--rate-limit <requests per window>]',
    summary: 'Create an API key (shown only once).',
    help: [
      'Creates an API key for a tenant and prints it. The key is shown only this once; only its',
      'SHA-256 hash is stored. JSON: {"id", "key"}.',
      '',
      '  --expires-at   when the key stops working (403 api_key_expired), e.g. 2026-12-31T23:59:59Z;',
      '                 a date alone means midnight UTC. Default: never.',
      '  --rate-limit   this key\'s own allowance per rate-limit window. Default: the server\'s.',
    ].join('\n'),
    options: { tenant: { type: 'string' }, 'expires-at': { type: 'string' }, 'rate-limit': { type: 'string' } },
    positionals: 0,
    async run(context) {
      const tenantId = required(context, 'tenant');
      const expiresAt = parseExpiresAt(context.values['expires-at']);
      const rateLimit = parseRateLimit(context.values['rate-limit']);
      const [{ createApiKeyStore }, { issueApiKey }] = await Promise.all([modules.apiKeys(), modules.issueApiKeys()]);
      const created = await issueApiKey(createApiKeyStore(await context.db(), { now: context.now }), { tenantId, expiresAt, rateLimit });
      return {
        json: created,
        text: [
          `Created API key ${created.id} for tenant ${tenantId}.`,
          'The key is shown only now; store it safely:',
          '',
          `  ${created.key}`,
          '',
          'Use it as: Authorization: Bearer <key>',
        ].join('\n'),
      };
    },
  },
  {
    path: ['key', 'revoke'],
    usage: 'key revoke <key id>',
    summary: 'Revoke an API key.',
    help: 'Revokes a key by its id (key_…); requests with it then answer 403 api_key_revoked. Revoking a revoked key changes nothing and prints the original time. JSON: {"id", "revokedAt"}.',
    options: {},
    positionals: 1,
    async run(context) {
      const id = context.positionals[0];
      if (!id) throw new CliError('Missing the id of the key to revoke (key_…).');
      const { createApiKeyStore } = await modules.apiKeys();
      const revoked = await createApiKeyStore(await context.db(), { now: context.now }).revokeApiKey(id);
      const revokedAt = iso(revoked.revokedAt);
      return { json: { id: revoked.id, revokedAt }, text: `Revoked ${revoked.id} at ${revokedAt}.` };
    },
  },
  {
    path: ['key', 'list'],
    usage: 'key list --tenant <tenant id>',
    summary: 'List a tenant\'s API keys (never the keys themselves).',
    help: 'Lists a tenant\'s keys, oldest first, with their 12-character prefix and state (active, revoked or expired). JSON: {"keys": [{"id", "prefix", "state", "createdAt", "expiresAt", "revokedAt", "rateLimit"}]}.',
    options: { tenant: { type: 'string' } },
    positionals: 0,
    async run(context) {
      const tenantId = required(context, 'tenant');
      const [{ createTenantStore }, { createApiKeyStore }] = await Promise.all([modules.tenants(), modules.apiKeys()]);
      const db = await context.db();
      if (!(await createTenantStore(db).getTenant(tenantId))) throw new CliError(`No tenant with id "${tenantId}".`);
      const listed = await createApiKeyStore(db, { now: context.now }).listApiKeys(tenantId);
      const keys = listed.map((key) => ({
        id: key.id,
        prefix: key.prefix,
        state: key.state,
        createdAt: iso(key.createdAt),
        expiresAt: iso(key.expiresAt),
        revokedAt: iso(key.revokedAt),
        rateLimit: key.rateLimit,
      }));
      const text =
        keys.length === 0
          ? `Tenant ${tenantId} has no API keys.`
          : keys
              .map(
                (key) =>
                  `${key.id}  ${key.prefix}…  ${key.state.padEnd(7)}  created ${key.createdAt}` +
                  (key.expiresAt ? `  expires ${key.expiresAt}` : '') +
                  (key.revokedAt ? `  revoked ${key.revokedAt}` : '') +
                  (key.rateLimit !== null ? `  rate limit ${key.rateLimit}` : ''),
              )
              .join('\n');
      return { json: { keys }, text };
    },
  },
  {
    path: ['portfolio', 'import'],
    usage: 'portfolio import --tenant <tenant id> --file <file.json | ->',
    summary: 'Replace a tenant\'s portfolio with an import-format document.',
    help: [
      'Validates the document against specs/portfolio/import-format.schema.json and the rules it',
      'describes, sanitizes its HTML and replaces the tenant\'s whole portfolio in one transaction.',
      'An invalid document changes nothing; every problem is listed with its JSON-pointer path.',
      '--file - reads the document from standard input.',
      'JSON: {"tenantId", "published", "updatedAt", "assets", "items": {<list>: {"total", "published"}}}.',
    ].join('\n'),
    options: { tenant: { type: 'string' }, file: { type: 'string' } },
    positionals: 0,
    async run(context) {
      const tenantId = required(context, 'tenant');
      const file = required(context, 'file');
      let text: string;
      try {
        text = readFileSync(file === '-' ? 0 : file, 'utf8');
      } catch (error) {
        throw new CliError(`Cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
      }
      let document: unknown;
      try {
        document = JSON.parse(text);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new CliError(`${file === '-' ? 'Standard input' : file} is not valid JSON: ${reason}`, [{ path: '', message: `is not valid JSON: ${reason}` }]);
      }
      const { importPortfolio } = await modules.portfolioImport();
      const summary = await importPortfolio(await context.db(), tenantId, document, context.now);
      const json = { ...summary, updatedAt: iso(summary.updatedAt) };
      const lines = Object.entries(summary.items).map(
        ([member, count]) => `  ${member.padEnd(13)}${String(count.total).padStart(4)} (${count.published} published)`,
      );
      return {
        json,
        text: [
          `Imported the portfolio of ${tenantId}; it is ${summary.published ? 'published' : 'NOT published'}.`,
          `  ${'assets'.padEnd(13)}${String(summary.assets).padStart(4)}`,
          ...lines,
        ].join('\n'),
      };
    },
  },
  {
    path: ['portfolio', 'export'],
    usage: 'portfolio export --tenant <tenant id>',
    summary: 'Print a tenant\'s portfolio as an import-format document.',
    help: 'Prints the tenant\'s portfolio in import format (sanitized HTML, generated ids, every optional member present), ready to edit and import again. The output is the document itself, with or without --json.',
    options: { tenant: { type: 'string' } },
    positionals: 0,
    async run(context) {
      const tenantId = required(context, 'tenant');
      const { exportPortfolio } = await modules.portfolioImport();
      const document = await exportPortfolio(await context.db(), tenantId);
      if (!document) throw new CliError(`Tenant ${tenantId} has no portfolio yet; import one first.`);
      return { json: document, text: JSON.stringify(document, null, 2) };
    },
  },
  ...workPlatformCommands,
  ...oauthClientCommands,
  migrateCommand,
  secretsCommand,
  ...backupCommands,
  ...keysCommands,
  {
    path: ['demo'],
    usage: 'demo',
    summary: 'Load the demo data set and print its keys, tokens and slugs.',
    help: [
      'Loads the demo data set: a full published portfolio (ten_demoAvaMoreno), a second tenant',
      '(ten_demoJonasFeld) and a tenant whose portfolio is not published (ten_demoPriyaRaman); and for',
      'the Work-Platform API a workspace on the free plan (ten_demoNorthwindStudio) with three projects',
      'and over 120 tasks, its owner, admin and member, and another workspace (ten_demoHarborLabs).',
      'Idempotent: missing demo tenants and workspaces are created, portfolios are re-imported from the',
      'same documents and the demo projects and tasks are recreated with the same ids (replaced, never',
      'duplicated); new keys and tokens are issued and earlier ones stay valid. Session tokens are signed',
      'with SESSION_JWT_SECRET, else the session-jwt.key beside DATABASE_PATH, as the server does.',
      'With DATABASE_URL it loads into that PostgreSQL database and needs the SESSION_JWT_SECRET and',
      'WEBHOOK_SECRET_KEY the servers share (load it once: the servers never load it into PostgreSQL).',
      'Other tenants and workspaces are not touched.',
      'JSON: {"portfolio": {"tenantId", "apiKey", "revokedApiKey", "expiredApiKey", "unpublishedApiKey",',
      '"otherTenantId", "otherTenantApiKey", "published", "unpublished", "otherTenantOnly"},',
      '"workPlatform": {"workspaceId", "plan", "projectId", "taskIds", "tokens": {"all", "readOnly",',
      '"noScopes", "revoked", "session", "memberSession", "expiredSession"}, "otherWorkspace":',
      '{"workspaceId", "projectId", "taskId", "token"}, "allowedOrigin", "oauthClient": {"id", "redirectUri", "scopes"}}}.',
    ].join('\n'),
    options: {},
    positionals: 0,
    async run(context) {
      const source = await context.db();
      const demoModule = await modules.demo();
      let secrets: Parameters<typeof demoModule.loadDemoData>[2] = {};
      if ((await modules.engine()).isEngine(source)) {
        const shared = demoModule.sharedDemoSecrets(context.env);
        if ('missing' in shared) {
          throw new CliError(
            `DATABASE_URL is set: give this command the ${shared.missing.join(' and ')} the servers share (npm run --silent admin -- secrets), or the demo's session tokens and webhook secret would not work on them.`,
          );
        }
        secrets = shared;
      }
      const fixture = await demoModule.loadDemoData(source, context.now, secrets);
      const demo = fixture.portfolio;
      const work = fixture.workPlatform;
      return {
        json: fixture,
        text: [
          'Demo data loaded.',
          `  main tenant      ${demo.tenantId}`,
          `  API key          ${demo.apiKey}`,
          `  revoked key      ${demo.revokedApiKey}`,
          `  expired key      ${demo.expiredApiKey}`,
          `  unpublished key  ${demo.unpublishedApiKey}  (tenant without a published portfolio)`,
          `  other tenant     ${demo.otherTenantId}  key ${demo.otherTenantApiKey}`,
          `  published        ${demo.published.outcomes.length} outcomes, ${demo.published.posts.length} posts, ${demo.published.pages.length} pages`,
          '',
          'Work-Platform API (/v1):',
          `  workspace        ${work.workspaceId} (plan ${work.plan}), project ${work.projectId}, ${work.taskIds.length} tasks`,
          `  PAT, every scope ${work.tokens.all}`,
          `  PAT, tasks:read  ${work.tokens.readOnly}`,
          `  PAT, no scopes   ${work.tokens.noScopes}`,
          `  PAT, revoked     ${work.tokens.revoked}`,
          `  owner session    ${work.tokens.session}`,
          `  member session   ${work.tokens.memberSession}`,
          `  expired session  ${work.tokens.expiredSession}`,
          `  other workspace  ${work.otherWorkspace.workspaceId}  PAT ${work.otherWorkspace.token}`,
          `  allowed origin   ${work.allowedOrigin}`,
          `  OAuth client     ${work.oauthClient.id}  public, redirect URI ${work.oauthClient.redirectUri}`,
          '',
          'Keys and tokens are shown only now. Try:',
          `  curl -H "Authorization: Bearer ${demo.apiKey}" http://localhost:3000/api/v1/profile`,
          `  curl -H "Authorization: Bearer ${work.tokens.all}" "http://localhost:3000/v1/tasks?sort=dueOn&order=asc&limit=5"`,
        ].join('\n'),
      };
    },
  },
];

const groups: Record<string, string> = {
  tenant: 'Tenants: each has its own portfolio and API keys.',
  key: 'API keys: bearer credentials of the Portfolio Read API, stored only as hashes.',
  portfolio: 'Portfolio content in the import format (specs/portfolio/import-format.schema.json).',
  ...workPlatformGroups,
  ...oauthClientGroups,
  ...keysGroups,
};

function mainHelp(): string {
  return [
    'Usage: npm run --silent admin -- <command> [options]',
    '',
    'Commands:',
    ...commands.map((command) => `  ${command.usage}\n      ${command.summary}`),
    '',
    'Options for every command:',
    '  --json        print exactly one JSON object on stdout (errors: {"error": {"message", "details"}})',
    '  --help, -h    show help for the command',
    '',
    'Environment:',
    `  DATABASE_PATH       SQLite database file (default: ${defaultDatabasePath}, relative to the working directory)`,
    '  DATABASE_URL        postgres://… : every command works on that PostgreSQL database instead',
    '  SESSION_JWT_SECRET  key that session create and demo sign with (default: session-jwt.key beside the database)',
    '  WEBHOOK_SECRET_KEY  key that demo seals its webhook secret with (default: webhook-secrets.key beside the database)',
    '  BACKUP_BEFORE_MIGRATE  on (default): a command that migrates an existing SQLite database copies it first; off: no copy',
    '  FIX_FILE_MODES      off (default): a command refuses a data directory, database or key file that others may read, as the server does; on: makes them owner-only',
    '',
    'Exit code 0 on success, 1 on any error (message on stderr).',
  ].join('\n');
}

function groupHelp(group: string): string {
  return [
    groups[group] ?? '',
    '',
    'Commands:',
    ...commands
      .filter((command) => command.path[0] === group)
      .map((command) => `  ${command.usage}\n      ${command.summary}`),
    '',
    'Add --help to a command for details.',
  ].join('\n');
}

function commandHelp(command: Command): string {
  return [
    `Usage: npm run --silent admin -- ${command.usage} [--json]`,
    '',
    command.help,
    '',
    '  --json        print exactly one JSON object on stdout',
    '  --help, -h    show this help',
  ].join('\n');
}

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  cwd: string;
  now: () => number;
}

/** Runs one CLI invocation and returns its exit code. */
export async function runAdmin(argv: string[], io: CliIo): Promise<number> {
  const wantsJson = argv.includes('--json');
  const wantsHelp = argv.includes('--help') || argv.includes('-h');
  const words = argv.filter((arg) => !arg.startsWith('-'));
  let opened: OpenedStore | undefined;

  try {
    const command = commands.find((candidate) => candidate.path.every((part, index) => words[index] === part));
    if (!command) {
      const group = words[0];
      if (wantsHelp) {
        io.stdout(`${group && groups[group] ? groupHelp(group) : mainHelp()}\n`);
        return 0;
      }
      if (words.length === 0) throw new CliError('Missing a command; run with --help for the list.');
      throw new CliError(`Unknown command "${words.slice(0, 2).join(' ')}"; run with --help for the list.`);
    }
    if (wantsHelp) {
      io.stdout(`${commandHelp(command)}\n`);
      return 0;
    }

    let parsed: ReturnType<typeof parseArgs>;
    try {
      parsed = parseArgs({
        args: joinNegativeValues(argv, command),
        options: { ...common, ...command.options },
        allowPositionals: true,
        strict: true,
      });
    } catch (error) {
      throw new CliError(`${error instanceof Error ? error.message : String(error)} (run with --help for usage)`);
    }
    const positionals = parsed.positionals.slice(command.path.length);
    if (positionals.length > command.positionals) {
      throw new CliError(`Unexpected argument "${positionals[command.positionals]}" (run with --help for usage).`);
    }

    const databasePath = resolve(io.cwd, io.env.DATABASE_PATH || defaultDatabasePath);
    const output = await command.run({
      db: async () => {
        if (!opened) {
          const [{ openStore }, { postgresConfig, backupBeforeMigrateSetting, fixFileModesSetting, ConfigError }, { checkFileModes, fixedFileModesNotice }] = await Promise.all([
            modules.openStore(),
            modules.config(),
            modules.startChecks(),
          ]);
          let postgres;
          let backupBeforeMigrate;
          try {
            postgres = postgresConfig(io.env);
            backupBeforeMigrate = backupBeforeMigrateSetting(io.env);
            // The server's check of the data directory, the database and the key files, before any of them is opened.
            const fixed = checkFileModes({ dataDirectory: dirname(databasePath), databasePath, postgres, fixFileModes: fixFileModesSetting(io.env) });
            if (fixed.length > 0) io.stderr(`${fixedFileModesNotice(fixed)}\n`);
          } catch (error) {
            if (error instanceof ConfigError) throw new CliError(error.message);
            throw error;
          }
          // Run from another folder, or before the server ever started, the default path names no database yet:
          // say that this creates one, rather than let a command seem to find nothing in the server's.
          if (!postgres && !io.env.DATABASE_PATH && !existsSync(databasePath)) {
            io.stderr(`No database at ${databasePath} (DATABASE_PATH is not set): creating a new, empty one. Set DATABASE_PATH to open the server's.\n`);
          }
          opened = await openStore({ postgres, databasePath, backupBeforeMigrate });
          if (opened.migrationBackup) io.stderr(`Copied the database to ${opened.migrationBackup} before migrating it (BACKUP_BEFORE_MIGRATE=off skips the copy).\n`);
        }
        return opened.sqlite ?? opened.engine;
      },
      databasePath,
      env: io.env,
      now: io.now,
      values: parsed.values as Record<string, string | boolean | undefined>,
      positionals,
      progress: io.stderr,
    });
    io.stdout(wantsJson ? `${JSON.stringify(output.json, null, 2)}\n` : `${output.text}\n`);
    return 0;
  } catch (caught) {
    const error = await toCliError(caught);
    io.stderr(`Error: ${error.message}\n`);
    for (const problem of error.details) io.stderr(`  ${problem.path || '/'}: ${problem.message}\n`);
    if (wantsJson) io.stdout(`${JSON.stringify({ error: { message: error.message, details: error.details } }, null, 2)}\n`);
    return 1;
  } finally {
    await opened?.close();
  }
}

/**
 * `--expires-in -1h` would make parseArgs refuse "-1h" as an ambiguous option; a value of a string
 * option that looks like a negative number is joined to its option (`--expires-in=-1h`) instead.
 */
function joinNegativeValues(argv: string[], command: Command): string[] {
  const joined: string[] = [];
  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index]!;
    const next = argv[index + 1];
    const option = arg.startsWith('--') ? command.options[arg.slice(2)] : undefined;
    if (option?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      joined.push(`${arg}=${next}`);
      index += 1;
    } else {
      joined.push(arg);
    }
  }
  return joined;
}

async function toCliError(error: unknown): Promise<CliError> {
  if (error instanceof CliError) return error;
  if (error instanceof (await modules.importValidation()).PortfolioImportError) {
    return new CliError(
      `The document is invalid: ${error.details.length} ${error.details.length === 1 ? 'problem' : 'problems'}; nothing was imported.`,
      error.details,
    );
  }
  if (error instanceof StoreError || error instanceof WorkPlatformStoreError) return new CliError(error.message);
  return new CliError(error instanceof Error ? error.message : String(error));
}

const invokedDirectly = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  process.exitCode = await runAdmin(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    cwd: process.cwd(),
    now: Date.now,
  });
}
