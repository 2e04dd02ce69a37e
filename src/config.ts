import { availableParallelism } from 'node:os';
import path from 'node:path';

export type ResponseValidationMode = 'off' | 'warn' | 'enforce';

export interface Config {
  port: number;
  host: string;
  databasePath: string;
  /** SQLite: copy an existing database (db.backup()) before applying pending migrations to it. */
  backupBeforeMigrate: boolean;
  /** Start-up makes the data directory, database and key files owner-only instead of refusing group- or world-readable ones. */
  fixFileModes: boolean;
  /** Set by DATABASE_URL: the database is PostgreSQL rather than SQLite at databasePath. */
  postgres: PostgresConfig | undefined;
  /** Base URL written into the served specifications and Postman collections. */
  publicBaseUrl: string;
  /** Default allowance per API key and window of the Portfolio Read API. */
  portfolioRateLimit: number;
  portfolioRateWindowSeconds: number;
  responseValidation: ResponseValidationMode;
  /** Load the demo data set when the database is empty at start-up. */
  loadDemoData: boolean;
  /** NODE_ENV=production. */
  production: boolean;
  /** The operator confirmed that a production start may serve the demo data set (its credentials are public). */
  allowDemoDataInProduction: boolean;
  logRequests: boolean;
  /** Browser origins allowed to call the Work-Platform API. */
  corsAllowedOrigins: string[];
  /** Prefix of the Work-Platform problem `type` URIs. */
  errorTypeBase: string;
  /** Base64url secrets; when unset they are generated into the data directory on first start. */
  sessionJwtSecret: string | undefined;
  cursorSecret: string | undefined;
  /** How long after a rotation the replaced session and cursor keys still verify what they signed. */
  previousKeyGraceMs: number;
  /** Folder beside the database where generated secrets are kept. */
  dataDirectory: string;
  /** Key material (base64url, ≥ 32 bytes) for sealing webhook signing secrets; generated when unset. */
  webhookSecretKey: string | undefined;
  /** Admit http(s) loopback targets (127.0.0.1, [::1], localhost) for local development and tests. */
  webhookAllowLoopback: boolean;
  /** How long a worker's claim of a delivery lasts (WEBHOOK_DELIVERY_LEASE_SECONDS): a crashed worker's deliveries are sent again after it. */
  webhookDeliveryLeaseMs: number;
  /** DNS servers (`address` or `address:port`) that resolve webhook host names; the system's when empty. */
  webhookDnsServers: string[];
  /** Run the webhook delivery worker inside the server process (`npm run worker` runs it alone). */
  webhookWorker: boolean;
  /** Key (base64url, ≥ 32 bytes) of the OAuth authorization server's cookies and consent CSRF tokens; generated when unset. */
  oauthCookieSecret: string | undefined;
  /** The OAuth authorization server's private EC P-256 JWK (JSON); generated when unset. */
  oauthSigningJwk: string | undefined;
  /** Bytes of encoded answers (portfolio answers and /v1 list pages) kept per process, all users together; 0 keeps none. */
  answerCacheMaxBytes: number;
  /** Encoded /v1 list pages kept per process (within answerCacheMaxBytes), served again while their collection is unchanged; 0 keeps none. */
  listPageCachePages: number;
  /** Where the server writes, when it closes, each operation's time per call step by step (PHASE_TIMINGS_FILE); unset keeps none. */
  phaseTimingsFile: string | undefined;
  /**
   * Who runs route, identify and authenticate: the pipeline itself (`direct`, unset), or openapi-backend's
   * handleRequest (`openapi-backend`), the reference test/http/directRouting.test.ts holds the direct steps to.
   * Not read from the environment.
   */
  routing?: 'direct' | 'openapi-backend';
  /** How long a statement of a serving process waits for another connection's write lock before retrying without blocking. */
  databaseBusyTimeoutMs: number;
  /** Expensive calls (x-ratelimit-cost above 1, the analytics): how many run at once, wait, and are in flight per workspace. */
  expensiveCalls: ExpensiveCallsConfig;
  /** Node's HTTP server limits: a client slower than these is answered 408 and cut off. */
  http: { headersTimeoutMs: number; requestTimeoutMs: number; keepAliveTimeoutMs: number; maxHeaderBytes: number; maxConnections: number };
  /** The AI routes: which provider answers them, and the price table their spend is charged by. */
  ai: AiConfig;
  /** The services connectors talk to. */
  connectors: ConnectorsConfig;
  /** Where rate-limit buckets and monthly quota counts live when they are not in SQLite; undefined: in SQLite. */
  redis: RedisConfig | undefined;
  /** After SIGTERM or SIGINT: how long /readyz answers 503 while everything is still served, before the drain begins. */
  shutdownDelayMs: number;
  /** The port of `npm run worker`'s /livez and /readyz listener (0: any free port); undefined: no listener. */
  workerHealthPort: number | undefined;
  /** Reverse proxies in front of the server whose X-Forwarded-For entries name the client (0: the connection's address). */
  trustProxy: number;
  /** The OAuth authorization server's own limits (it answers before any credential is known). */
  oauthLimits: OauthLimitsConfig;
}

export interface OauthLimitsConfig {
  /** Requests per client address and window to /oauth/authorize, /oauth/sign-in and /oauth/interaction/*; 0: no limit. */
  pagesPerWindow: number;
  /** Requests per client address and window to /oauth/token, /oauth/introspect and /oauth/revoke; 0: no limit. */
  tokenCallsPerWindow: number;
  windowSeconds: number;
  /** Authorizations in progress (interaction records) kept per client; starting one more drops the oldest. */
  interactionsPerClient: number;
}

export interface ExpensiveCallsConfig {
  /** SQLite: worker threads that run them, each with its own read-only connection; 0 runs them on the main thread. */
  threads: number;
  /** Calls that wait for a running one; beyond them, 429. */
  queued: number;
  /** Calls of one workspace in flight (running or waiting); beyond them, 429. */
  perWorkspace: number;
  /** PostgreSQL: connections of the pool they may hold at once; undefined: half of DATABASE_POOL_MAX. */
  postgresConnections: number | undefined;
}

/** The default thread count: one on two cores or fewer (the other core serves requests), else one less than the cores, at most 4. */
export function defaultExpensiveCallThreads(cores = availableParallelism()): number {
  return cores <= 2 ? 1 : Math.min(4, cores - 1);
}

export interface RedisConfig {
  /** `redis://[[user]:password@]host[:port][/db]` or `rediss://…`; never logged as it is (see redactedRedisUrl). */
  url: string;
  /** Prepended to every key, so that several deployments (or test runs) can share one Redis. */
  keyPrefix: string;
  connectTimeoutMs: number;
  /** A command unanswered for this long counts as Redis unreachable. */
  commandTimeoutMs: number;
}

export interface PostgresConfig {
  /** The postgres:// URL as given; print postgresUrlForDisplay(url) instead, never this. */
  url: string;
  poolMax: number;
  connectTimeoutMs: number;
  statementTimeoutMs: number;
}

export interface ConnectorsConfig {
  /** GitHub's REST API, e.g. https://api.github.com (no trailing slash). */
  githubApiBaseUrl: string;
  /** How long one request to a connected service may take. */
  timeoutMs: number;
}

export type AiProviderName = 'offline' | 'openai-compatible';

export interface AiConfig {
  provider: AiProviderName;
  /** The OpenAI-compatible server, e.g. https://api.openai.com/v1 (no trailing slash); empty for offline. */
  baseUrl: string;
  apiKey: string | undefined;
  /** The model asked for; `offline-rules-1` is the offline provider's own. */
  model: string;
  timeoutMs: number;
  prices: { inputCentsPerMillionTokens: number; outputCentsPerMillionTokens: number };
}

/** Every environment variable the server reads, documented once; the table of docs/configuration.md mirrors it (test/config.test.ts checks it). */
export const ENVIRONMENT_VARIABLES = [
  { name: 'PORT', default: '3000', description: 'TCP port to listen on (0 picks a free port).' },
  { name: 'HOST', default: '0.0.0.0', description: 'Interface to listen on.' },
  { name: 'DATABASE_PATH', default: 'data/app.db', description: 'SQLite database file; created and migrated at start-up.' },
  {
    name: 'DATABASE_URL',
    default: 'none (SQLite at DATABASE_PATH)',
    description:
      'postgres://user:password@host:5432/name (or postgresql://) selects PostgreSQL instead of SQLite, for every server, worker and admin command: migrated at start (or by npm run admin -- migrate). Several hosts may share it; the shared secrets must then be set (npm run admin -- secrets). The database must sort text by code point (C.UTF-8 collation).',
  },
  {
    name: 'BACKUP_BEFORE_MIGRATE',
    default: 'on',
    description:
      'SQLite: on: before applying pending migrations to an existing database (an upgrade), copy it to <DATABASE_PATH>.before-<migration>.<time>.bak (mode 0600, with db.backup()); off: migrate without a copy (keep your own backups). A new database is never copied.',
  },
  {
    name: 'FIX_FILE_MODES',
    default: 'off',
    description:
      'on: at start, remove group and other permissions from the SQLite database (and its -wal, -shm), the key files and a data directory others may write, and say so; off: refuse to start while any of those files is group- or world-accessible, or the directory group- or world-writable.',
  },
  { name: 'DATABASE_POOL_MAX', default: '10', description: 'PostgreSQL: connections at most per process.' },
  {
    name: 'DATABASE_CONNECT_TIMEOUT_MS',
    default: '5000',
    description: 'PostgreSQL: how long to wait for a new connection, or for a free one when the pool is full, before failing.',
  },
  {
    name: 'DATABASE_STATEMENT_TIMEOUT_MS',
    default: '15000',
    description: 'PostgreSQL: the server cancels a statement running longer (0: no limit). Migrations run without it.',
  },
  {
    name: 'PUBLIC_BASE_URL',
    default: 'http://localhost:<PORT>',
    description: 'Base URL that the served openapi.json/openapi.yaml/postman.json name as their server.',
  },
  { name: 'PORTFOLIO_RATE_LIMIT', default: '120', description: 'Requests allowed per API key and window (a key may carry its own allowance).' },
  { name: 'PORTFOLIO_RATE_WINDOW_SECONDS', default: '60', description: 'Length of a rate-limit window in seconds.' },
  {
    name: 'RESPONSE_VALIDATION',
    default: 'off',
    description: 'Check every response against the contract: off, warn (log violations) or enforce (log and answer 500).',
  },
  {
    name: 'ANSWER_CACHE_MAX_BYTES',
    default: '33554432',
    description:
      'Memory for encoded answers kept per process (32 MiB by default), shared by the portfolio answers and the /v1 list pages, each served again until what it was built from changes; least recently used dropped first; 0 keeps none.',
  },
  {
    name: 'LIST_PAGE_CACHE_PAGES',
    default: '512',
    description: 'Encoded /v1 task and project list pages kept in memory (within ANSWER_CACHE_MAX_BYTES), each served again until its collection changes; 0 keeps none.',
  },
  {
    name: 'DATABASE_BUSY_TIMEOUT_MS',
    default: '20',
    description:
      "How long one SQLite statement waits for another process's write lock (the wait blocks the process). Writes are then retried without blocking for about 1.3 s before answering 503; reads never wait for a writer.",
  },
  {
    name: 'EXPENSIVE_CALL_THREADS',
    default: '1 on 2 cores, else cores - 1 (at most 4)',
    description:
      'SQLite: worker threads that run the expensive calls (x-ratelimit-cost above 1: the analytics), each with a read-only connection, so they never hold the request loop; 0 runs them on the main thread. Also how many run at once.',
  },
  { name: 'EXPENSIVE_CALL_QUEUE', default: '8', description: 'Expensive calls that may wait for a running one; a call beyond them answers 429 rate-limited (code expensive-call-queue-full).' },
  {
    name: 'EXPENSIVE_CALLS_PER_WORKSPACE',
    default: '2',
    description: 'Expensive calls one workspace may have in flight (running or waiting); one more answers 429 rate-limited (code workspace-concurrency-cap).',
  },
  {
    name: 'EXPENSIVE_CALL_CONNECTIONS',
    default: 'half of DATABASE_POOL_MAX',
    description: 'PostgreSQL: pool connections the expensive calls may hold at once (they run on the request loop, which only waits for them), so other requests always find a connection.',
  },
  { name: 'HTTP_HEADERS_TIMEOUT_MS', default: '10000', description: 'Time a client has to send the whole request head; slower ones are answered 408 and disconnected.' },
  { name: 'HTTP_REQUEST_TIMEOUT_MS', default: '30000', description: 'Time a client has to send the whole request, body included; then 408.' },
  { name: 'HTTP_KEEP_ALIVE_TIMEOUT_MS', default: '5000', description: 'How long an idle kept-alive connection stays open.' },
  { name: 'HTTP_MAX_HEADER_BYTES', default: '16384', description: 'Largest request head accepted; a larger one is answered 431.' },
  { name: 'HTTP_MAX_CONNECTIONS', default: '1000', description: 'Open connections at most; further ones are refused until some close.' },
  {
    name: 'DEMO_DATA',
    default: 'on (off when NODE_ENV=production)',
    description: 'on: load the demo data set (and print its keys and tokens) into an empty database at start-up; off: start empty.',
  },
  {
    name: 'ALLOW_DEMO_DATA_IN_PRODUCTION',
    default: 'off',
    description:
      'on: a NODE_ENV=production start may load the demo data set (DEMO_DATA=on) or serve a database that holds it; off: such a start is refused. The demo ids, OAuth client and webhook are public knowledge: for demos and benchmarks only.',
  },
  { name: 'LOG_REQUESTS', default: 'on', description: 'on: one JSON log line per request on stdout; off: none.' },
  {
    name: 'CORS_ALLOWED_ORIGINS',
    default: 'http://localhost:5173',
    description: 'Comma-separated browser origins allowed to call /v1; any other Origin answers 403. Empty: no browser access.',
  },
  {
    name: 'ERROR_TYPE_BASE',
    default: 'https://errors.work-platform.example/problems',
    description: 'Prefix of the /v1 problem `type` URIs (`<base>/<slug>`).',
  },
  {
    name: 'SESSION_JWT_SECRET',
    default: 'generated into <data dir>/session-jwt.key',
    description:
      'HS256 keys for session tokens: one key (URL-safe base64 of at least 32 bytes), or a key list "<id> <key> [<added>]", comma-separated, newest last (docs/operations.md, "Key rotation"). Every server process of a deployment needs the same one.',
  },
  {
    name: 'CURSOR_SECRET',
    default: 'generated into <data dir>/cursor.key',
    description: 'HMAC keys that sign list cursors: one key or a key list, as SESSION_JWT_SECRET. Shared by every server process.',
  },
  {
    name: 'PREVIOUS_KEY_GRACE_SECONDS',
    default: '86400',
    description:
      'After a session or cursor key is replaced (npm run admin -- keys rotate), how long it still verifies the sessions and cursors it signed; then they are refused (401, 400).',
  },
  {
    name: 'WEBHOOK_SECRET_KEY',
    default: 'generated into <data dir>/webhook-secrets.key',
    description:
      'Keys that encrypt webhook signing secrets, connector credentials and stored idempotent answers at rest (AES-256-GCM): one key (URL-safe base64 of at least 32 bytes) or a key list, as SESSION_JWT_SECRET; sealed with the newest, opened with any. Shared by every server and worker process; losing a key still in use makes what it sealed unreadable.',
  },
  {
    name: 'WEBHOOK_DELIVERY_LEASE_SECONDS',
    default: '60',
    description:
      'How long a worker holds a delivery it claimed, at least 16 (an attempt takes up to 10 s and is started only with 5 s of the lease to spare). A worker that dies (SIGKILL, a lost host) leaves its deliveries to the others once their lease lapses: shorter means sooner, at the cost of more claim writes. Every worker and server of one database should use the same value.',
  },
  {
    name: 'WEBHOOK_ALLOW_LOOPBACK',
    default: 'off',
    description:
      'on: also accept http://127.0.0.1, http://[::1] and http://localhost webhook targets (local development and tests only). Off by default: targets must be public HTTPS.',
  },
  {
    name: 'WEBHOOK_DNS_SERVERS',
    default: '(the system\'s)',
    description:
      'Comma-separated DNS servers (address or address:port) that resolve webhook host names, instead of those of /etc/resolv.conf (the bench points it at its slow local DNS server).',
  },
  {
    name: 'WEBHOOK_WORKER',
    default: 'on',
    description: 'on: `npm start` also runs the webhook delivery worker; off: run it apart with `npm run worker` (any number of them).',
  },
  {
    name: 'AI_PROVIDER',
    default: 'offline',
    description:
      'Who answers the /v1/ai routes: offline (built-in rules, no network, model offline-rules-1) or openai-compatible (a chat-completions server at AI_BASE_URL).',
  },
  { name: 'AI_BASE_URL', default: 'none', description: 'With openai-compatible: the API base, e.g. https://api.openai.com/v1 or http://127.0.0.1:8080/v1; `/chat/completions` is appended.' },
  { name: 'AI_API_KEY', default: 'none', description: 'With openai-compatible: sent as Authorization: Bearer; leave unset for a local server that needs none. Never logged.' },
  { name: 'AI_MODEL', default: 'none', description: 'With openai-compatible: the model to ask for, e.g. gpt-4o-mini; named in every answer.' },
  { name: 'AI_TIMEOUT_MS', default: '20000', description: 'How long one provider call may take (connect, send, answer); then 504 ai-provider-timeout.' },
  {
    name: 'AI_PRICE_INPUT_CENTS_PER_MILLION_TOKENS',
    default: '15',
    description: 'US cents per million prompt tokens, for every provider (up to 3 decimals): what a call is charged against the daily AI spend cap.',
  },
  { name: 'AI_PRICE_OUTPUT_CENTS_PER_MILLION_TOKENS', default: '60', description: 'US cents per million completion tokens, for every provider (up to 3 decimals).' },
  {
    name: 'OAUTH_COOKIE_SECRET',
    default: 'generated into <data dir>/oauth-cookies.key',
    description:
      "Keys that sign the OAuth authorization server's cookies and its consent page's CSRF tokens: one key (URL-safe base64 of at least 32 bytes) or a key list, as SESSION_JWT_SECRET; a replaced key still verifies for PREVIOUS_KEY_GRACE_SECONDS. Shared by every server process.",
  },
  {
    name: 'OAUTH_SIGNING_JWK',
    default: 'generated into <data dir>/oauth-signing-key.json',
    description:
      'Private EC P-256 keys of the OAuth authorization server, published at /oauth/jwks: one JWK as JSON, or a JWK set {"keys": [...]} oldest first (the last signs). Access tokens are opaque and never signed; the library needs keys of its own. Shared by every server process.',
  },
  {
    name: 'GITHUB_API_BASE_URL',
    default: 'https://api.github.com',
    description: 'GitHub REST API base of the github connectors (GitHub Enterprise Server: https://<host>/api/v3). Their tokens are sent only to this origin.',
  },
  { name: 'CONNECTOR_TIMEOUT_MS', default: '10000', description: 'How long one request of a connector to its service may take (connect, send, whole answer); then 504 connector-provider-timeout.' },
  {
    name: 'REDIS_URL',
    default: 'none',
    description:
      'redis:// or rediss:// URL of a Redis (6.2 or later) that holds the rate-limit buckets and the monthly quota counts, shared exactly by every server process; unset: they stay in SQLite. Its password is never logged.',
  },
  { name: 'REDIS_KEY_PREFIX', default: 'contract-api:', description: 'Prefix of every Redis key this server writes, so that several deployments can share one Redis.' },
  { name: 'REDIS_CONNECT_TIMEOUT_MS', default: '1000', description: 'How long one attempt to connect to Redis may take; attempts go on in the background.' },
  {
    name: 'REDIS_COMMAND_TIMEOUT_MS',
    default: '500',
    description: 'How long one count in Redis may take; a slower or failed one counts as Redis unreachable and the call is decided without it (see docs/operations.md, "Redis").',
  },
  {
    name: 'SHUTDOWN_DELAY_MS',
    default: '0',
    description:
      'After SIGTERM or SIGINT, /readyz answers 503 at once but requests are served normally for this long before the server stops accepting and drains, so that load balancers stop sending first. Kubernetes: a few seconds more than the readiness probe period times its failure threshold (e.g. 5 s x 2 + 5 s = 15000), with terminationGracePeriodSeconds above this plus 15 s.',
  },
  {
    name: 'WORKER_HEALTH_PORT',
    default: 'off',
    description: 'npm run worker: the port of its /livez and /readyz HTTP listener (on HOST; 0 picks a free port); off or unset: no listener.',
  },
  {
    name: 'TRUST_PROXY',
    default: '0',
    description:
      'Reverse proxies in front of the server, each appending to X-Forwarded-For: the client address the /oauth limits count is the entry the outermost one wrote (the TRUST_PROXY-th from the right, the connection counted first). 0: the connection\'s own address, and X-Forwarded-For is ignored.',
  },
  {
    name: 'OAUTH_PAGE_RATE_LIMIT',
    default: '60',
    description:
      'Requests per client address and window to the OAuth browser pages (/oauth/authorize, /oauth/sign-in, /oauth/interaction/*); one more answers 429 with Retry-After and an HTML page. An authorization takes about 6. 0: no limit.',
  },
  {
    name: 'OAUTH_TOKEN_RATE_LIMIT',
    default: '300',
    description:
      'Requests per client address and window to /oauth/token, /oauth/introspect and /oauth/revoke; one more answers 429 with Retry-After and {"error":"temporarily_unavailable"}. 0: no limit.',
  },
  { name: 'OAUTH_RATE_WINDOW_SECONDS', default: '60', description: 'Length of the /oauth limits\' window in seconds.' },
  {
    name: 'OAUTH_INTERACTIONS_PER_CLIENT',
    default: '1000',
    description:
      'Authorizations in progress (started at /oauth/authorize, each kept for 10 minutes) kept per OAuth client; starting one more drops the oldest, whose user is asked to start again.',
  },
] as const;

type VariableName = (typeof ENVIRONMENT_VARIABLES)[number]['name'];

/**
 * The key files the server generates into the data directory when their variable is unset, read
 * from the defaults above (`generated into <data dir>/<file>`), with their variables: what a backup
 * must carry beside the database, and what start-up holds to owner-only modes.
 */
export const generatedKeyFiles: readonly { file: string; variable: string }[] = ENVIRONMENT_VARIABLES.flatMap((variable) => {
  const file = /^generated into <data dir>\/(.+)$/.exec(variable.default)?.[1];
  return file ? [{ file, variable: variable.name }] : [];
});

export class ConfigError extends Error {}

/** The `--help` lines of the given variables (every one by default): name, description, default. */
export function environmentHelp(names?: ReadonlySet<string>): string {
  const listed = ENVIRONMENT_VARIABLES.filter((variable) => !names || names.has(variable.name));
  // The longest name and two spaces: no name runs into its description.
  const width = Math.max(...listed.map((variable) => variable.name.length)) + 2;
  return listed.map((variable) => `  ${variable.name.padEnd(width)}${variable.description} (default: ${variable.default})`).join('\n');
}

/** How an entry point (npm start, npm run worker) reports a failed start: one line on stderr, exit 1. */
export function exitOnStartFailure(error: unknown): never {
  if (error instanceof ConfigError) {
    process.stderr.write(`Configuration error: ${error.message}\n`);
  } else {
    process.stderr.write(`Start-up failed: ${error instanceof Error ? error.message : String(error)}\n`);
  }
  process.exit(1);
}

/** A postgres:// URL (as loadConfig admits it) with its password replaced by `***`, for messages and start-up banners. */
export function postgresUrlForDisplay(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    // The query may carry a password too (?password=, ?sslpassword=): it is never shown.
    parsed.search = '';
    parsed.hash = '';
    return parsed.toString();
  } catch {
    return '<not a URL>';
  }
}

/** DATABASE_URL and the pool variables: undefined when DATABASE_URL is unset (SQLite). Throws ConfigError. */
export function postgresConfig(env: NodeJS.ProcessEnv): PostgresConfig | undefined {
  const url = env.DATABASE_URL;
  if (url === undefined || url === '') return undefined;
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || !['postgres:', 'postgresql:'].includes(parsed.protocol) || (parsed.hostname === '' && !parsed.searchParams.has('host'))) {
    // The value itself is never repeated: whatever its form, it may hold a password.
    const given = !parsed ? 'a value that is not a URL' : ['postgres:', 'postgresql:'].includes(parsed.protocol) ? 'one without a host' : `a ${parsed.protocol} URL`;
    throw new ConfigError(
      `DATABASE_URL must be a postgres:// or postgresql:// URL with a host, e.g. postgres://app:secret@127.0.0.1:5432/app (unset it for SQLite at DATABASE_PATH); got ${given}`,
    );
  }
  return {
    url,
    poolMax: positiveInteger('DATABASE_POOL_MAX', env.DATABASE_POOL_MAX, 10),
    connectTimeoutMs: positiveInteger('DATABASE_CONNECT_TIMEOUT_MS', env.DATABASE_CONNECT_TIMEOUT_MS, 5_000),
    statementTimeoutMs: positiveInteger('DATABASE_STATEMENT_TIMEOUT_MS', env.DATABASE_STATEMENT_TIMEOUT_MS, 15_000, true),
  };
}

/** The secrets every server and worker process of one deployment must share (`admin secrets` prints new ones). */
export const sharedSecretNames = ['SESSION_JWT_SECRET', 'CURSOR_SECRET', 'WEBHOOK_SECRET_KEY', 'OAUTH_COOKIE_SECRET', 'OAUTH_SIGNING_JWK'] as const;

/**
 * With DATABASE_URL the processes of a deployment may run on several hosts, whose data directories
 * would each generate secrets of their own (sessions signed on one host refused on the next,
 * webhook secrets one worker cannot open): every shared secret must come from the environment.
 */
export function requireSharedSecrets(config: Config, env: NodeJS.ProcessEnv = process.env): void {
  if (!config.postgres) return;
  const missing = sharedSecretNames.filter((name) => !env[name]?.trim());
  if (missing.length === 0) return;
  throw new ConfigError(
    `DATABASE_URL is set, so the processes of this deployment may run on several hosts and must share their secrets, but ${missing.join(', ')} ` +
      `${missing.length === 1 ? 'is' : 'are'} not set. Generate them once with \`npm run --silent admin -- secrets > .env\` and give that file to every server and worker.`,
  );
}

function positiveInteger(name: VariableName, raw: string | undefined, fallback: number, allowZero = false): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < (allowZero ? 0 : 1)) {
    throw new ConfigError(`${name} must be an integer ≥ ${allowZero ? 0 : 1}, got "${raw}"`);
  }
  return value;
}

/** The shortest delivery lease: the attempt timeout (10 s) and the margin it is started with (5 s), and a second. */
const MIN_DELIVERY_LEASE_SECONDS = 16;

function deliveryLeaseMs(raw: string | undefined): number {
  const seconds = positiveInteger('WEBHOOK_DELIVERY_LEASE_SECONDS', raw, 60);
  if (seconds < MIN_DELIVERY_LEASE_SECONDS) {
    throw new ConfigError(`WEBHOOK_DELIVERY_LEASE_SECONDS must be at least ${MIN_DELIVERY_LEASE_SECONDS} (an attempt takes up to 10 s and starts only with 5 s of its lease to spare), got "${raw}"`);
  }
  return seconds * 1000;
}

/** A price in cents: a number from 0 to 9,999,999.999 with at most 3 decimals (costs stay exact integers). */
function centsPrice(name: VariableName, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d{1,7}(\.\d{1,3})?$/.test(raw)) throw new ConfigError(`${name} must be a number of cents ≥ 0 with at most 3 decimals, got "${raw}"`);
  return Number(raw);
}

function aiConfig(env: NodeJS.ProcessEnv): AiConfig {
  const provider = (env.AI_PROVIDER || 'offline') as AiProviderName;
  if (provider !== 'offline' && provider !== 'openai-compatible') {
    throw new ConfigError(`AI_PROVIDER must be offline or openai-compatible, got "${env.AI_PROVIDER}"`);
  }
  const baseUrl = (env.AI_BASE_URL || '').replace(/\/+$/, '');
  const model = env.AI_MODEL || '';
  if (provider === 'openai-compatible') {
    if (!/^https?:\/\/[^/]+/.test(baseUrl)) throw new ConfigError(`AI_PROVIDER=openai-compatible needs AI_BASE_URL, an http(s) URL; got "${env.AI_BASE_URL ?? ''}"`);
    if (model === '') throw new ConfigError('AI_PROVIDER=openai-compatible needs AI_MODEL, the model to ask for');
  }
  return {
    provider,
    baseUrl,
    apiKey: env.AI_API_KEY || undefined,
    model,
    timeoutMs: positiveInteger('AI_TIMEOUT_MS', env.AI_TIMEOUT_MS, 20_000),
    prices: {
      inputCentsPerMillionTokens: centsPrice('AI_PRICE_INPUT_CENTS_PER_MILLION_TOKENS', env.AI_PRICE_INPUT_CENTS_PER_MILLION_TOKENS, 15),
      outputCentsPerMillionTokens: centsPrice('AI_PRICE_OUTPUT_CENTS_PER_MILLION_TOKENS', env.AI_PRICE_OUTPUT_CENTS_PER_MILLION_TOKENS, 60),
    },
  };
}

function connectorsConfig(env: NodeJS.ProcessEnv): ConnectorsConfig {
  const githubApiBaseUrl = (env.GITHUB_API_BASE_URL || 'https://api.github.com').replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]+/.test(githubApiBaseUrl)) throw new ConfigError(`GITHUB_API_BASE_URL must be an http(s) URL, got "${env.GITHUB_API_BASE_URL}"`);
  return { githubApiBaseUrl, timeoutMs: positiveInteger('CONNECTOR_TIMEOUT_MS', env.CONNECTOR_TIMEOUT_MS, 10_000) };
}

function redisConfig(env: NodeJS.ProcessEnv): RedisConfig | undefined {
  const url = env.REDIS_URL || '';
  if (url === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError('REDIS_URL must be a redis:// or rediss:// URL');
  }
  // The message never repeats the URL: it may carry a password.
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new ConfigError(`REDIS_URL must be a redis:// or rediss:// URL, not ${parsed.protocol}//`);
  if (parsed.hostname === '') throw new ConfigError('REDIS_URL must name a host');
  return {
    url,
    keyPrefix: env.REDIS_KEY_PREFIX ?? 'contract-api:',
    connectTimeoutMs: positiveInteger('REDIS_CONNECT_TIMEOUT_MS', env.REDIS_CONNECT_TIMEOUT_MS, 1_000),
    commandTimeoutMs: positiveInteger('REDIS_COMMAND_TIMEOUT_MS', env.REDIS_COMMAND_TIMEOUT_MS, 500),
  };
}

/** The Redis URL with its password (and user name) replaced, for log lines and banners. */
export function redactedRedisUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.username !== '') parsed.username = '***';
  if (parsed.password !== '') parsed.password = '***';
  // The query may carry a password too (?password=): it is never shown.
  parsed.search = '';
  parsed.hash = '';
  return parsed.href;
}

/** BACKUP_BEFORE_MIGRATE alone, for the admin CLI, which migrates as the server does. Throws ConfigError. */
export function backupBeforeMigrateSetting(env: NodeJS.ProcessEnv): boolean {
  return onOff('BACKUP_BEFORE_MIGRATE', env.BACKUP_BEFORE_MIGRATE, true);
}

/** FIX_FILE_MODES alone, for the admin CLI, which reads no other setting of the server's. */
export function fixFileModesSetting(env: NodeJS.ProcessEnv): boolean {
  return onOff('FIX_FILE_MODES', env.FIX_FILE_MODES, false);
}

function onOff(name: VariableName, raw: string | undefined, fallback: boolean): boolean {
  if (raw === undefined || raw === '') return fallback;
  if (['on', '1', 'true', 'yes'].includes(raw.toLowerCase())) return true;
  if (['off', '0', 'false', 'no'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be on or off, got "${raw}"`);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = positiveInteger('PORT', env.PORT, 3000, true);
  const responseValidation = (env.RESPONSE_VALIDATION || 'off') as ResponseValidationMode;
  if (!['off', 'warn', 'enforce'].includes(responseValidation)) {
    throw new ConfigError(`RESPONSE_VALIDATION must be off, warn or enforce, got "${env.RESPONSE_VALIDATION}"`);
  }
  const publicBaseUrl = (env.PUBLIC_BASE_URL || '').replace(/\/+$/, '');
  if (publicBaseUrl && !/^https?:\/\/[^/]+(\/.*)?$/.test(publicBaseUrl)) {
    throw new ConfigError(`PUBLIC_BASE_URL must be an http(s) URL, got "${env.PUBLIC_BASE_URL}"`);
  }
  const databasePath = path.resolve(env.DATABASE_PATH || 'data/app.db');
  const errorTypeBase = (env.ERROR_TYPE_BASE || 'https://errors.work-platform.example/problems').replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]+/.test(errorTypeBase)) throw new ConfigError(`ERROR_TYPE_BASE must be an http(s) URL, got "${env.ERROR_TYPE_BASE}"`);
  return {
    port,
    host: env.HOST || '0.0.0.0',
    databasePath,
    backupBeforeMigrate: onOff('BACKUP_BEFORE_MIGRATE', env.BACKUP_BEFORE_MIGRATE, true),
    fixFileModes: fixFileModesSetting(env),
    postgres: postgresConfig(env),
    publicBaseUrl,
    portfolioRateLimit: positiveInteger('PORTFOLIO_RATE_LIMIT', env.PORTFOLIO_RATE_LIMIT, 120),
    answerCacheMaxBytes: positiveInteger('ANSWER_CACHE_MAX_BYTES', env.ANSWER_CACHE_MAX_BYTES, 32 * 1024 * 1024, true),
    listPageCachePages: positiveInteger('LIST_PAGE_CACHE_PAGES', env.LIST_PAGE_CACHE_PAGES, 512, true),
    phaseTimingsFile: env.PHASE_TIMINGS_FILE || undefined,
    databaseBusyTimeoutMs: positiveInteger('DATABASE_BUSY_TIMEOUT_MS', env.DATABASE_BUSY_TIMEOUT_MS, 20, true),
    expensiveCalls: {
      threads: positiveInteger('EXPENSIVE_CALL_THREADS', env.EXPENSIVE_CALL_THREADS, defaultExpensiveCallThreads(), true),
      queued: positiveInteger('EXPENSIVE_CALL_QUEUE', env.EXPENSIVE_CALL_QUEUE, 8, true),
      perWorkspace: positiveInteger('EXPENSIVE_CALLS_PER_WORKSPACE', env.EXPENSIVE_CALLS_PER_WORKSPACE, 2),
      postgresConnections: env.EXPENSIVE_CALL_CONNECTIONS === undefined || env.EXPENSIVE_CALL_CONNECTIONS === '' ? undefined : positiveInteger('EXPENSIVE_CALL_CONNECTIONS', env.EXPENSIVE_CALL_CONNECTIONS, 1),
    },
    http: {
      headersTimeoutMs: positiveInteger('HTTP_HEADERS_TIMEOUT_MS', env.HTTP_HEADERS_TIMEOUT_MS, 10_000),
      requestTimeoutMs: positiveInteger('HTTP_REQUEST_TIMEOUT_MS', env.HTTP_REQUEST_TIMEOUT_MS, 30_000),
      keepAliveTimeoutMs: positiveInteger('HTTP_KEEP_ALIVE_TIMEOUT_MS', env.HTTP_KEEP_ALIVE_TIMEOUT_MS, 5_000),
      maxHeaderBytes: positiveInteger('HTTP_MAX_HEADER_BYTES', env.HTTP_MAX_HEADER_BYTES, 16_384),
      maxConnections: positiveInteger('HTTP_MAX_CONNECTIONS', env.HTTP_MAX_CONNECTIONS, 1_000),
    },
    portfolioRateWindowSeconds: positiveInteger('PORTFOLIO_RATE_WINDOW_SECONDS', env.PORTFOLIO_RATE_WINDOW_SECONDS, 60),
    responseValidation,
    // A production server never mints live demo credentials unless asked to.
    loadDemoData: onOff('DEMO_DATA', env.DEMO_DATA, env.NODE_ENV !== 'production'),
    production: env.NODE_ENV === 'production',
    allowDemoDataInProduction: onOff('ALLOW_DEMO_DATA_IN_PRODUCTION', env.ALLOW_DEMO_DATA_IN_PRODUCTION, false),
    logRequests: onOff('LOG_REQUESTS', env.LOG_REQUESTS, true),
    corsAllowedOrigins: (env.CORS_ALLOWED_ORIGINS ?? 'http://localhost:5173')
      .split(',')
      .map((origin) => origin.trim())
      .filter(Boolean),
    errorTypeBase,
    sessionJwtSecret: env.SESSION_JWT_SECRET || undefined,
    cursorSecret: env.CURSOR_SECRET || undefined,
    previousKeyGraceMs: positiveInteger('PREVIOUS_KEY_GRACE_SECONDS', env.PREVIOUS_KEY_GRACE_SECONDS, 86_400, true) * 1000,
    webhookSecretKey: env.WEBHOOK_SECRET_KEY || undefined,
    webhookAllowLoopback: onOff('WEBHOOK_ALLOW_LOOPBACK', env.WEBHOOK_ALLOW_LOOPBACK, false),
    webhookDeliveryLeaseMs: deliveryLeaseMs(env.WEBHOOK_DELIVERY_LEASE_SECONDS),
    webhookDnsServers: (env.WEBHOOK_DNS_SERVERS ?? '').split(',').map((server) => server.trim()).filter((server) => server !== ''),
    webhookWorker: onOff('WEBHOOK_WORKER', env.WEBHOOK_WORKER, true),
    oauthCookieSecret: env.OAUTH_COOKIE_SECRET || undefined,
    oauthSigningJwk: env.OAUTH_SIGNING_JWK || undefined,
    dataDirectory: path.dirname(databasePath),
    ai: aiConfig(env),
    connectors: connectorsConfig(env),
    redis: redisConfig(env),
    shutdownDelayMs: positiveInteger('SHUTDOWN_DELAY_MS', env.SHUTDOWN_DELAY_MS, 0, true),
    workerHealthPort:
      env.WORKER_HEALTH_PORT === undefined || env.WORKER_HEALTH_PORT === '' || env.WORKER_HEALTH_PORT.toLowerCase() === 'off'
        ? undefined
        : positiveInteger('WORKER_HEALTH_PORT', env.WORKER_HEALTH_PORT, 0, true),
    trustProxy: positiveInteger('TRUST_PROXY', env.TRUST_PROXY, 0, true),
    oauthLimits: {
      pagesPerWindow: positiveInteger('OAUTH_PAGE_RATE_LIMIT', env.OAUTH_PAGE_RATE_LIMIT, 60, true),
      tokenCallsPerWindow: positiveInteger('OAUTH_TOKEN_RATE_LIMIT', env.OAUTH_TOKEN_RATE_LIMIT, 300, true),
      windowSeconds: positiveInteger('OAUTH_RATE_WINDOW_SECONDS', env.OAUTH_RATE_WINDOW_SECONDS, 60),
      interactionsPerClient: positiveInteger('OAUTH_INTERACTIONS_PER_CLIENT', env.OAUTH_INTERACTIONS_PER_CLIENT, 1000),
    },
  };
}
