import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { answerEdgeError, noteRequestLine, type EdgeErrorReplyFor } from './http/edgeErrors.js';
import type BetterSqlite3 from 'better-sqlite3';
import type { Document } from 'openapi-backend';
import type { Config } from './config.js';
import { createPhaseTimings } from './contract/phaseTimings.js';
import { ResponseContract } from './contract/responseContract.js';
import { loadServedArtifacts } from './contract/servedArtifacts.js';
import { createHttpAdapter } from './http/httpAdapter.js';
import { createAddressRateLimiter } from './limits/addressRateLimiter.js';
import { LocalQuotaCounts } from './limits/localQuotaCounts.js';
import { SqliteRateLimiter } from './limits/rateLimiter.js';
import { openRedisConnection } from './limits/redisConnection.js';
import { RedisLimitCounters } from './limits/redisLimitCounters.js';
import type { SharedCallCounter } from './limits/sharedCallCounter.js';
import { EngineLimitCounters } from './limits/engineLimitCounters.js';
import type { Logger } from './logger.js';
import { portfolioProfile } from './portfolio/portfolioProfile.js';
import { createContractApi } from './contract/pipeline.js';
import { createApiKeyStore } from './store/apiKeys.js';
import { isDatabaseBusy, runInImmediateTransaction } from './store/database.js';
import { openStore, type OpenedStore } from './openStore.js';
import { sqliteEngine, type StoreEngine } from './store/engine.js';
import { createPortfolioReader } from './store/portfolioContent.js';
import path from 'node:path';
import { createCorsPolicy } from './http/cors.js';
import { workPlatformPlanTable } from './limits/planLimits.js';
import { createCursorCodec } from './paging/cursor.js';
import { contractHousekeeping, startScheduledJobs, webhookHousekeeping } from './scheduledJobs.js';
import { createIdempotencyKeyStore, type IdempotencyKeyStore } from './store/idempotencyKeys.js';
import { createIdempotencyClaimStore } from './store/idempotencyClaims.js';
import { createAiSpendStore } from './store/aiSpend.js';
import { createProjectOpenWorkReader } from './store/projectOpenWork.js';
import { createAiProvider } from './ai/aiProviders.js';
import { createPersonalAccessTokenStore } from './store/personalAccessTokens.js';
import { createProjectStore } from './store/projects.js';
import { createCompanyStore } from './store/companies.js';
import { createContactStore } from './store/contacts.js';
import { createAnalyticsStore } from './store/analytics.js';
import { createDealStore } from './store/deals.js';
import { createContractStore } from './store/contracts.js';
import { createConnectorStore } from './store/connectors.js';
import { createImportedIssueStore } from './store/importedIssues.js';
import { createGithubClient } from './connectors/githubClient.js';
import { createQuotaCounterStore } from './store/quotaCounters.js';
import { loadSigningKeys, signingKeyFileName } from './auth/oauth/signingKeys.js';
import { keyFilePath, loadKeyRing } from './auth/keyRings.js';
import { createAuthorizationServer, oauthResourceFor } from './auth/oauth/authorizationServer.js';
import { createOauthClientStore } from './store/oauthClients.js';
import { createOauthRecordStore } from './store/oauthRecords.js';
import { createBoundedCache } from './store/boundedCache.js';
import { createCachedRows, listenForCachedRowChanges } from './store/cachedRows.js';
import type { PatCaller } from './store/personalAccessTokens.js';
import type { ApiKeyRecord } from './store/apiKeys.js';
import { createListPageCache } from './store/listPageCache.js';
import { createTaskStore } from './store/tasks.js';
import { createUserStore } from './store/users.js';
import { createWebhookDeliveryStore } from './store/webhookDeliveries.js';
import { createWorkspaceStore } from './store/workspaces.js';
import { createDeliveryWorker, type DeliveryWorker, type DeliveryWorkerOptions } from './webhooks/worker/deliveryLoop.js';
import { loadSealingBox } from './auth/secretBox.js';
import { assertWebhookSecretKeyOpensSecrets } from './webhooks/signingSecrets.js';
import { createWebhookSubscriptions } from './webhooks/subscriptions.js';
import { createHostResolver, systemDnsResolver, type DnsResolver } from './webhooks/hostResolver.js';
import { createCallerResolver, type CallerResolver } from './auth/bearerTokens.js';
import { workPlatformProfile } from './workPlatform/workPlatformProfile.js';
import type { WorkPlatformServices } from './workPlatform/operationContext.js';
import { scopeCatalogue } from '../generated/work-platform/rules.js';
import { createMcpHttpHandler } from './mcp/mcpServer.js';
import { createReferenceAssets } from './http/referenceAssets.js';
import { createHealthEndpoints } from './http/healthEndpoints.js';
import { createRootIndex } from './http/rootIndex.js';
import { createReadiness } from './health/readiness.js';
import { createDatabaseReadiness } from './store/readiness.js';
import { createExpensiveCallGate, type ExpensiveCallGate } from './expensiveCalls/expensiveCallGate.js';
import { createAnalyticsWorkerPool, type AnalyticsWorkerPool } from './expensiveCalls/analyticsWorkerPool.js';
import type { AnalyticsStore } from './store/analytics.js';

/** How long the claim on an Idempotency-Key of an AI call lasts when its process dies mid-call. */
const IDEMPOTENCY_CLAIM_LEASE_MS = 5 * 60_000;

/** Credentials (and the caller each names) kept in memory on PostgreSQL, at most (src/store/cachedRows.ts). */
const CACHED_CREDENTIALS = 10_000;

/** How long the last write of the quota counts at shutdown waits for another process's write lock. */
const SHUTDOWN_BUSY_TIMEOUT_MS = 1_000;

/** How long close() lets open requests finish before it cuts their connections (the process must exit within 10 s). */
const CLOSE_CONNECTIONS_AFTER_MS = 8_000;

export interface RunningApp {
  /** The address the server listens on, e.g. `http://127.0.0.1:3000`. */
  url: string;
  /** The base URL the served downloads name. */
  publicBaseUrl: string;
  server: Server;
  /** The SQLite connection the app serves from; undefined on PostgreSQL. */
  db: BetterSqlite3.Database | undefined;
  /** The store engine the app serves from. */
  engine: StoreEngine;
  /** The concurrency caps of expensive calls, and on SQLite the worker threads that run their reads. */
  expensiveCalls: { gate: ExpensiveCallGate; pool: AnalyticsWorkerPool | undefined };
  /** The in-process webhook delivery worker, when `config.webhookWorker` is on. */
  webhookWorker: DeliveryWorker | undefined;
  /**
   * The first step of a shutdown: /readyz answers 503 (`shutdown: 'fail'`) from now on, and
   * everything else is served as before, until close() (SHUTDOWN_DELAY_MS later in src/server.ts).
   */
  markShuttingDown(): void;
  /** Stops the webhook worker and accepting connections, lets open requests and attempts finish, closes the database. */
  close(): Promise<void>;
}

export interface AppDependencies {
  now?: () => number;
  logger: Logger;
  /** An already opened SQLite database (tests); otherwise the store the configuration selects is opened (openStore). */
  db?: BetterSqlite3.Database;
  /** An already opened store, SQLite or PostgreSQL (the server's start-up); closed by its opener. */
  store?: OpenedStore;
  /** The analytics threads' module (tests inject one that fails). */
  analyticsWorkerUrl?: URL;
  /** What the in-process webhook worker gets injected (tests: DNS, jitter, retry sweep, timeout). */
  webhookDelivery?: Pick<DeliveryWorkerOptions, 'lookup' | 'random' | 'retrySweep' | 'timeoutMs' | 'concurrency'>;
  /**
   * The DNS resolver of webhook host names (tests); the system's through c-ares by default. One
   * cache over it serves creation, update and delivery (`webhookDelivery.lookup`, when given, replaces it).
   */
  webhookResolver?: DnsResolver;
  /** Wraps what looks bearer tokens up (tests count the look-ups). */
  wrapCallers?: (callers: CallerResolver) => CallerResolver;
  /** Wraps the store of Idempotency-Key answers (tests count the look-ups). */
  wrapIdempotencyKeys?: (keys: IdempotencyKeyStore) => IdempotencyKeyStore;
}

/** Start-up: database ─► APIs ─► HTTP adapter ─► listen. */
export async function startApp(config: Config, deps: AppDependencies): Promise<RunningApp> {
  const now = deps.now ?? Date.now;
  /** Set by close(): from then on every answer closes its connection. */
  let closing: Promise<void> | undefined;
  /** The error funnel of the API owning a path, for errors Node's parser answers; set once the APIs are built. */
  let edgeErrorReply: EdgeErrorReplyFor | undefined;
  const opened: OpenedStore = deps.store ?? (deps.db ? openedSqlite(deps.db) : await openStore(config, deps.logger));
  /** Closes the store when this app opened it. */
  const closeStore = () => (deps.store || deps.db ? Promise.resolve() : opened.close());
  const db = opened.sqlite;
  const storeEngine = opened.engine;
  const apiKeys = createApiKeyStore(storeEngine, { now });
  // Credentials, portfolio and collection revisions are kept in memory until a change is announced (PostgreSQL, at most 1 s) or the SQLite file changed.
  const cachedRowChanges = await listenForCachedRowChanges(storeEngine);
  const cachedApiKeys = createCachedRows<ApiKeyRecord>(cachedRowChanges, ['api_keys'], { now, maxEntries: CACHED_CREDENTIALS });
  const cachedPatCallers = createCachedRows<PatCaller>(cachedRowChanges, ['personal_access_tokens', 'users', 'workspaces'], { now, maxEntries: CACHED_CREDENTIALS });
  // REDIS_URL: the rate-limit buckets and the monthly quota are counted in Redis. Without it on
  // PostgreSQL: in the database, every call. On SQLite: by rateLimiter, quota and localQuota, synchronously.
  const redis = config.redis ? await openRedisConnection(config.redis, deps.logger) : undefined;
  const redisCounter = redis && config.redis ? new RedisLimitCounters(redis, { keyPrefix: config.redis.keyPrefix, now }) : undefined;
  const engineCounter = storeEngine.kind === 'postgres' ? new EngineLimitCounters(storeEngine, { now }) : undefined;
  const callCounter: SharedCallCounter | undefined = redisCounter ?? engineCounter;
  // Without a shared counter (SQLite, no Redis): counted synchronously in the SQLite file.
  const sqliteLimits = db && !callCounter ? sqliteCallLimits(db, now) : undefined;
  const readiness = createReadiness({
    database: createDatabaseReadiness(storeEngine),
    redis: redis ? { ping: () => redis.redis.ping() } : undefined,
    now,
    logger: deps.logger,
  });

  const users = createUserStore(storeEngine, { now });
  const workspaces = createWorkspaceStore(storeEngine, { now });
  const keyStore = createIdempotencyKeyStore(storeEngine);
  const idempotencyKeys = deps.wrapIdempotencyKeys?.(keyStore) ?? keyStore;
  // One memory cap for every answer the process keeps.
  const answerCache = createBoundedCache({ maxBytes: config.answerCacheMaxBytes });
  const idempotencyClaims = createIdempotencyClaimStore(storeEngine);
  const sessionKeys = loadKeyRing(config.sessionJwtSecret, keyFilePath('session', config.dataDirectory), { name: 'SESSION_JWT_SECRET' });
  const cursorKeys = loadKeyRing(config.cursorSecret, keyFilePath('cursor', config.dataDirectory), { name: 'CURSOR_SECRET' });
  const oauthCookieKeys = loadKeyRing(config.oauthCookieSecret, keyFilePath('oauth-cookies', config.dataDirectory), { name: 'OAUTH_COOKIE_SECRET' });
  const oauthSigningKeys = loadSigningKeys(config.oauthSigningJwk, path.join(config.dataDirectory, signingKeyFileName));
  const oauthRecords = createOauthRecordStore(storeEngine, { now });
  const contracts = createContractStore(storeEngine, { now });
  const webhookSecrets = loadSealingBox(config);
  const lookup = deps.webhookDelivery?.lookup;
  const webhookResolver = createHostResolver({
    now,
    ...(lookup ? { lookup } : { resolver: deps.webhookResolver ?? systemDnsResolver({ servers: config.webhookDnsServers }) }),
  });
  if (config.webhookWorker) {
    // Refuse to start before listening: a worker that cannot open the stored secrets signs nothing.
    try {
      await assertWebhookSecretKeyOpensSecrets(createWebhookDeliveryStore(storeEngine, { now }), webhookSecrets);
    } catch (error) {
      await closeStore();
      await redis?.close();
      throw error;
    }
  }

  const expensiveCalls = expensiveCallSetup(config, opened, deps.analyticsWorkerUrl);
  const referenceAssets = createReferenceAssets();
  // Written at close (PHASE_TIMINGS_FILE): each operation's time per call, step by step (the bench's budget).
  const phaseTimings = config.phaseTimingsFile ? createPhaseTimings() : undefined;
  const buildHandler = async (publicBaseUrl: string) => {
    const workPlatformArtifacts = loadServedArtifacts('work-platform', publicBaseUrl, { allowLoopbackWebhooks: config.webhookAllowLoopback });
    const corsPolicy = createCorsPolicy(config.corsAllowedOrigins);
    const planTable = workPlatformPlanTable();
    const pats = createPersonalAccessTokenStore(storeEngine, { now });
    const tokenCallers = createCallerResolver({
      pats: { findPatCaller: (tokenHash) => cachedPatCallers.get(tokenHash, () => pats.findPatCaller(tokenHash)) },
      users,
      sessionKeys,
      sessionKeyGraceMs: config.previousKeyGraceMs,
      oauthTokens: oauthRecords,
      oauthResource: oauthResourceFor(publicBaseUrl),
      now,
    });
    const callers = deps.wrapCallers?.(tokenCallers) ?? tokenCallers;
    const authorizationServer = createAuthorizationServer({
      publicBaseUrl,
      records: oauthRecords,
      clients: createOauthClientStore(storeEngine, { now }),
      users,
      callers,
      signingKeys: oauthSigningKeys,
      cookieKeys: oauthCookieKeys,
      cookieKeyGraceMs: config.previousKeyGraceMs,
      logger: deps.logger,
      now,
      limits: {
        rateLimiter: createAddressRateLimiter({ callCounter, rateLimiter: sqliteLimits?.rateLimiter, now }),
        ...config.oauthLimits,
        trustProxy: config.trustProxy,
      },
      problemTypeBase: config.errorTypeBase,
    });
    const workPlatform = workPlatformProfile({
      document: workPlatformArtifacts.document as Document,
      callers,
      services: {
        workspaces,
        tasks: createTaskStore(storeEngine, { now }),
        projects: createProjectStore(storeEngine, { now }),
        crm: { companies: createCompanyStore(storeEngine, { now }), contacts: createContactStore(storeEngine, { now }), deals: createDealStore(storeEngine, { now }) },
        contracts,
        analytics: expensiveCalls.analytics,
        webhooks: createWebhookSubscriptions(storeEngine, { secretBox: webhookSecrets, allowLoopback: config.webhookAllowLoopback, now, resolver: webhookResolver }),
        cursors: createCursorCodec(cursorKeys, { graceMs: config.previousKeyGraceMs, now }),
        listPages: createListPageCache(storeEngine, { cache: answerCache, maxPages: config.listPageCachePages, changes: cachedRowChanges, now }),
        planTable,
        quota: callCounter ?? sqliteLimits!.usage,
        downloads: workPlatformArtifacts,
        ai: {
          provider: createAiProvider(config.ai),
          logger: deps.logger,
          prices: config.ai.prices,
          spend: createAiSpendStore(storeEngine, { now }),
          openWork: createProjectOpenWorkReader(storeEngine),
        },
        connectors: {
          store: createConnectorStore(storeEngine, { now }),
          importedIssues: createImportedIssueStore(storeEngine, { now }),
          github: createGithubClient({ baseUrl: config.connectors.githubApiBaseUrl, timeoutMs: config.connectors.timeoutMs }),
          secretBox: webhookSecrets,
        },
      },
      scopeCatalogue,
      planTable,
      callCounter,
      sqliteLimits,
      expensiveCalls: expensiveCalls.gate,
      cors: corsPolicy,
      problemTypeBase: config.errorTypeBase,
      now,
      logger: deps.logger,
    });
    const workPlatformApi = await createContractApi(workPlatform, {
      now,
      phaseTimings,
      routing: config.routing,
      idempotency: {
        store: idempotencyKeys,
        transactions: storeEngine,
        answerBox: webhookSecrets,
        now,
        // A claim outlives the longest AI call by far; it lapses only when its process died mid-call.
        claims: { store: idempotencyClaims, leaseMs: Math.max(IDEMPOTENCY_CLAIM_LEASE_MS, 2 * config.ai.timeoutMs) },
      },
    });
    const mountedWorkPlatform = {
      api: workPlatformApi,
      responseContract: ResponseContract.sharedFor(workPlatformArtifacts.document as Record<string, unknown>),
      errorReply: workPlatform.errorReply,
    };
    const agentTools = createMcpHttpHandler({
      document: workPlatformArtifacts.document,
      api: mountedWorkPlatform,
      responseValidation: config.responseValidation,
      resourceMetadataUrl: `${new URL(publicBaseUrl).origin}/.well-known/oauth-protected-resource`,
      version: String((workPlatformArtifacts.document as { info?: { version?: unknown } }).info?.version ?? ''),
      logger: deps.logger,
    });
    const portfolioArtifacts = loadServedArtifacts('portfolio', publicBaseUrl);
    const portfolio = portfolioProfile({
      document: portfolioArtifacts.document as Document,
      findApiKeyByHash: (hash) => cachedApiKeys.get(hash, () => apiKeys.findApiKeyByHash(hash)),
      services: {
        content: createPortfolioReader(storeEngine, { cache: answerCache, revisions: createCachedRows<number>(cachedRowChanges, ['portfolios'], { now, maxEntries: CACHED_CREDENTIALS }) }),
        downloads: portfolioArtifacts,
      },
      rateLimiter: sqliteLimits?.rateLimiter,
      callCounter,
      rateLimit: { requestsPerWindow: config.portfolioRateLimit, windowSeconds: config.portfolioRateWindowSeconds },
      now,
      logger: deps.logger,
    });
    const portfolioApi = await createContractApi(portfolio, { now, phaseTimings, routing: config.routing });
    const adapter = createHttpAdapter({
      apis: [
        {
          api: portfolioApi,
          responseContract: ResponseContract.sharedFor(portfolioArtifacts.document as Record<string, unknown>),
          errorReply: portfolio.errorReply,
        },
        mountedWorkPlatform,
      ],
      handlers: [
        // Before everything else, and outside both APIs: the probes and the index (docs/operations.md, "Health and drain").
        createHealthEndpoints({ readiness, problemTypeBase: config.errorTypeBase }),
        createRootIndex(
          [
            { document: portfolioArtifacts.document, pathPrefix: portfolioApi.pathPrefix },
            { document: workPlatformArtifacts.document, pathPrefix: workPlatformApi.pathPrefix },
          ],
          publicBaseUrl,
        ),
        authorizationServer,
        agentTools,
        referenceAssets,
      ],
      responseValidation: config.responseValidation,
      logger: deps.logger,
      logRequests: config.logRequests,
      now,
      isDraining: () => closing !== undefined,
      phaseTimings,
    });
    // Errors Node's parser answers are worded as the adapter routes: by each API's declared prefix, or the handler owning the path.
    // A connection that named no path gets the neutral shape: problem+json (both specs, "Errors").
    edgeErrorReply = (path) => (path === undefined ? mountedWorkPlatform.errorReply : adapter.errorReplyFor(path));
    return adapter;
  };

  let handler: Awaited<ReturnType<typeof buildHandler>> | undefined;
  const limits = config.http;
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: Math.max(limits.requestTimeoutMs, limits.headersTimeoutMs),
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      maxHeaderSize: limits.maxHeaderBytes,
      // Node would answer a request without Host with a bare 400 of its own; nothing here needs the header.
      requireHostHeader: false,
      // Node checks the two timeouts only this often; the default (30 s) would let a slow client stay far longer.
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 4))),
    },
    (req, res) => {
      // The adapter answers every failure itself; this is the last guard, so that a bug there never ends the process.
      handler!(req, res).catch((error: unknown) => {
        deps.logger.error('request failed outside the error funnel', { error: error instanceof Error ? error.message : String(error) });
        res.destroy();
      });
    },
  );
  server.maxConnections = limits.maxConnections;
  server.on('connection', noteRequestLine);
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (!edgeErrorReply) return socket.destroy();
    answerEdgeError(error, socket, { maxHeaderBytes: limits.maxHeaderBytes, headersTimeoutMs: limits.headersTimeoutMs, requestTimeoutMs: limits.requestTimeoutMs }, edgeErrorReply);
  });
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => resolve());
    });
  // With a fixed port the APIs are ready before the first connection can arrive; with port 0 the
  // public base URL needs the port the OS picked, and nobody can know that port before it is printed.
  if (config.port !== 0) {
    handler = await buildHandler(config.publicBaseUrl || `http://localhost:${config.port}`);
    await listen();
  } else {
    await listen();
  }
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${address.port}`;
  const publicBaseUrl = config.publicBaseUrl || `http://localhost:${address.port}`;
  handler ??= await buildHandler(publicBaseUrl);

  // The worker sweeps for due retries every second (node-cron) and is woken by each commit that queues a delivery.
  const webhookWorker = config.webhookWorker
    ? createDeliveryWorker({
        // The SQLite connection itself when there is one: its commit poll wakes the worker within milliseconds.
        db: db ?? storeEngine,
        secretBox: webhookSecrets,
        logger: deps.logger,
        allowLoopback: config.webhookAllowLoopback,
        leaseMs: config.webhookDeliveryLeaseMs,
        now,
        ...deps.webhookDelivery,
        resolver: webhookResolver,
      })
    : undefined;
  await webhookWorker?.start();
  const webhookDeliveries = webhookWorker?.store ?? createWebhookDeliveryStore(storeEngine, { now, leaseMs: config.webhookDeliveryLeaseMs });

  const rateWindowRetentionMs = Math.max(2 * Math.max(config.portfolioRateWindowSeconds, config.oauthLimits.windowSeconds) * 1000, 60 * 60 * 1000);
  const jobs = startScheduledJobs(
    [
      // Written quietly: a count is not a removal.
      ...(sqliteLimits ? [{ name: 'write-local-quota-counts', every: '* * * * * *', run: () => (sqliteLimits.writeLocalQuotaCounts(), 0) }] : []),
      ...(redisCounter ? [{ name: 'write-redis-quota-counts', every: '* * * * * *', run: async () => (await redisCounter.writeUnwrittenQuotaCalls(), 0) }] : []),
      {
        name: 'purge-rate-limit-windows',
        every: '*/10 * * * *',
        run: () => (engineCounter ?? sqliteLimits?.rateLimiter)?.purgeWindowsBefore(now() - rateWindowRetentionMs) ?? 0,
      },
      { name: 'purge-expired-idempotency-keys', every: '17 * * * *', run: () => idempotencyKeys.purgeExpiredIdempotencyKeys(now()) },
      { name: 'purge-lapsed-idempotency-claims', every: '19 * * * *', run: () => idempotencyClaims.purgeLapsedIdempotencyClaims(now()) },
      { name: 'purge-expired-oauth-records', every: '*/10 * * * *', run: () => oauthRecords.purgeExpired() },
      ...webhookHousekeeping(webhookDeliveries, now),
      ...contractHousekeeping(contracts),
    ],
    deps.logger,
  );

  /** Writes the quota calls admitted while Redis could not be reached (if it answers now), then disconnects. */
  const closeRedis = async () => {
    if (!redis || !redisCounter) return;
    await redisCounter.writeUnwrittenQuotaCalls();
    const lost = redisCounter.unwrittenQuotaCalls();
    if (lost > 0) deps.logger.error('quota calls admitted while Redis was unreachable could not be written at shutdown', { calls: lost });
    await redis.close();
  };

  return {
    url,
    publicBaseUrl,
    server,
    db,
    engine: storeEngine,
    expensiveCalls: { gate: expensiveCalls.gate, pool: expensiveCalls.pool },
    webhookWorker,
    markShuttingDown: () => readiness.markShuttingDown(),
    close() {
      readiness.markShuttingDown();
      closing ??= new Promise<void>((resolve) => {
        // Housekeeping under way and attempts in flight (within their timeout) end before the database closes.
        const jobsStopped = jobs.stop();
        const workerStopped = Promise.all([webhookWorker?.stop(), jobsStopped]);
        server.close(() => {
          void workerStopped.then(() => {
            if (sqliteLimits && db) {
              // The last chance to write them: wait for another process's write lock longer than a request would.
              try {
                db.pragma(`busy_timeout = ${SHUTDOWN_BUSY_TIMEOUT_MS}`);
                sqliteLimits.writeLocalQuotaCounts();
              } catch (error) {
                deps.logger.error('quota counts not written at shutdown', { error: error instanceof Error ? error.message : String(error) });
              }
              const lost = sqliteLimits.localQuota.unwritten(now()).reduce((sum, { calls }) => sum + calls, 0);
              if (lost > 0) deps.logger.error('quota calls counted by this process could not be written at shutdown', { calls: lost });
            }
            if (phaseTimings && config.phaseTimingsFile) writeFileSync(config.phaseTimingsFile, `${JSON.stringify(phaseTimings.budget(), null, 2)}\n`);
            void (expensiveCalls.pool?.close() ?? Promise.resolve())
              .then(() => cachedRowChanges.stop())
              .then(closeStore)
              .then(closeRedis)
              .then(resolve);
          });
        });
        server.closeIdleConnections();
        // A client that keeps a request open (a slow upload) cannot hold the shutdown past this.
        setTimeout(() => server.closeAllConnections(), CLOSE_CONNECTIONS_AFTER_MS).unref();
      });
      return closing;
    },
  };
}

/** How long a worker thread's read waits for SQLite (a checkpoint): it holds only its own thread. */
const ANALYTICS_THREAD_BUSY_TIMEOUT_MS = 2_000;

/**
 * The caps of expensive calls and the analytics store they read with. SQLite on a file: a pool of
 * worker threads (EXPENSIVE_CALL_THREADS), as many calls running as threads. PostgreSQL: the
 * engine's store, as many calls running as EXPENSIVE_CALL_CONNECTIONS (half the pool by default),
 * so that the other requests always find a connection. SQLite in memory, or with 0 threads: on the
 * main thread, one at a time.
 */
function expensiveCallSetup(config: Config, opened: OpenedStore, workerUrl: URL | undefined): { gate: ExpensiveCallGate; pool: AnalyticsWorkerPool | undefined; analytics: AnalyticsStore } {
  const { threads, queued, perWorkspace, postgresConnections } = config.expensiveCalls;
  if (opened.engine.kind === 'postgres') {
    const running = postgresConnections ?? Math.max(1, Math.floor((config.postgres?.poolMax ?? 10) / 2));
    return { gate: createExpensiveCallGate({ running, queued, perWorkspace }), pool: undefined, analytics: createAnalyticsStore(opened.engine) };
  }
  const file = opened.sqlite?.name;
  if (threads > 0 && file && file !== ':memory:') {
    const pool = createAnalyticsWorkerPool({ databasePath: file, threads, busyTimeoutMs: ANALYTICS_THREAD_BUSY_TIMEOUT_MS, workerUrl });
    return { gate: createExpensiveCallGate({ running: threads, queued, perWorkspace }), pool, analytics: pool.store };
  }
  return { gate: createExpensiveCallGate({ running: 1, queued, perWorkspace }), pool: undefined, analytics: createAnalyticsStore(opened.engine) };
}

/** An opened store over a SQLite connection its opener keeps (tests). */
function openedSqlite(db: BetterSqlite3.Database): OpenedStore {
  return { engine: sqliteEngine(db), sqlite: db, location: db.name, close: async () => undefined };
}

/**
 * The SQLite limiter: rate-limit windows counted synchronously in the file, the monthly quota
 * counted in this process while far from its allowance and written every second.
 */
function sqliteCallLimits(db: BetterSqlite3.Database, now: () => number) {
  const rateLimiter = new SqliteRateLimiter(db, now);
  const quota = createQuotaCounterStore(db);
  const localQuota = new LocalQuotaCounts();
  /** Adds the quota calls counted in this process alone to the shared count; returns how many. */
  const writeLocalQuotaCounts = (): number => {
    const pending = localQuota.unwritten(now());
    if (pending.length === 0) return 0;
    try {
      runInImmediateTransaction(db, () => {
        for (const { workspaceId, period, calls } of pending) quota.addQuotaCalls(workspaceId, period, calls);
      });
    } catch (error) {
      // Another process holds the write lock: the counts stay here until the next try.
      if (isDatabaseBusy(error)) return 0;
      throw error;
    }
    localQuota.flushed(pending, now());
    return pending.reduce((sum, { calls }) => sum + calls, 0);
  };
  const usage: WorkPlatformServices['quota'] = {
    quotaUsage(workspaceId, at) {
      const counted = quota.quotaUsage(workspaceId, at);
      return { ...counted, used: counted.used + localQuota.unwrittenFor(workspaceId, at) };
    },
  };
  return { rateLimiter, quota, localQuota, writeLocalQuotaCounts, usage };
}
