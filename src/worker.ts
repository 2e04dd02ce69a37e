import { environmentHelp, exitOnStartFailure, loadConfig, requireSharedSecrets } from './config.js';
import { createJsonLogger } from './logger.js';
import { startScheduledJobs, webhookHousekeeping } from './scheduledJobs.js';
import { openStore } from './openStore.js';
import { checkDemoDataInProduction, checkFileModes, demoInProductionWarning, fixedFileModesNotice } from './startChecks.js';
import { DELIVERY_LEASE_MS } from './store/webhookDeliveries.js';
import { createDeliveryWorker, DEFAULT_COMMIT_POLL_MS, DEFAULT_WORKER_CONCURRENCY, targetCap } from './webhooks/worker/deliveryLoop.js';
import { DELIVERY_TIMEOUT_MS } from './webhooks/deliveryRequest.js';
import { loadSealingBox } from './auth/secretBox.js';
import { createReadiness } from './health/readiness.js';
import { createHealthEndpoints } from './http/healthEndpoints.js';
import { startHealthServer, type HealthServer } from './http/healthServer.js';
import { createDatabaseReadiness } from './store/readiness.js';
import { createHostResolver, systemDnsResolver } from './webhooks/hostResolver.js';

const WORKER_VARIABLES = new Set([
  'DATABASE_PATH',
  'DATABASE_URL',
  'BACKUP_BEFORE_MIGRATE',
  'FIX_FILE_MODES',
  'WEBHOOK_SECRET_KEY',
  'WEBHOOK_ALLOW_LOOPBACK',
  'WEBHOOK_DELIVERY_LEASE_SECONDS',
  'WEBHOOK_DNS_SERVERS',
  'WORKER_HEALTH_PORT',
  'HOST',
  'ERROR_TYPE_BASE',
  'DEMO_DATA',
  'ALLOW_DEMO_DATA_IN_PRODUCTION',
]);

const HELP = `Usage: npm run worker

Runs the webhook delivery worker alone, on the database of DATABASE_URL (PostgreSQL) or else
DATABASE_PATH (SQLite): it claims deliveries
(${DELIVERY_LEASE_MS / 1000}-second leases, WEBHOOK_DELIVERY_LEASE_SECONDS) within ${DEFAULT_COMMIT_POLL_MS} ms of the commit that queued them and due retries
every second, POSTs each signed at sending, and records every attempt and the retry schedule in
the database. Any number of workers and servers (npm start with WEBHOOK_WORKER=on) may share one
database; each attempt is made by one of them. Start the servers with WEBHOOK_WORKER=off
to deliver from workers only. SIGTERM or SIGINT stops claiming and waits for the attempts in flight
(at most ${DELIVERY_TIMEOUT_MS / 1000} s each). With WORKER_HEALTH_PORT it answers GET /livez (the process is up)
and GET /readyz (its database answers, holds this build's migrations, and it is not stopping; with
the age of the oldest due delivery) on that port. With NODE_ENV=production it refuses to start, as
npm start does, on a database that holds the demo data set (or with DEMO_DATA=on) unless
ALLOW_DEMO_DATA_IN_PRODUCTION=on confirms it.

Environment variables:
${environmentHelp(WORKER_VARIABLES)}
`;

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(HELP);
    return;
  }
  const config = loadConfig();
  requireSharedSecrets(config);
  const fixedModes = checkFileModes(config);
  if (fixedModes.length > 0) process.stdout.write(`${fixedFileModesNotice(fixedModes)}\n`);
  // The server's own check, before the store is opened or migrated: the worker signs and sends with the demo's public webhook secrets too.
  const { holdsDemoRecords } = await checkDemoDataInProduction(config);
  const logger = createJsonLogger();
  const store = await openStore(config, logger);
  const worker = createDeliveryWorker({
    // The SQLite connection itself when there is one: its commit poll wakes the worker within milliseconds.
    db: store.sqlite ?? store.engine,
    secretBox: loadSealingBox(config),
    logger,
    allowLoopback: config.webhookAllowLoopback,
    leaseMs: config.webhookDeliveryLeaseMs,
    resolver: createHostResolver({ resolver: systemDnsResolver({ servers: config.webhookDnsServers }) }),
  });
  // Throws (Start-up failed, exit 1) when WEBHOOK_SECRET_KEY cannot open the stored signing secrets.
  await worker.start();
  const jobs = startScheduledJobs(webhookHousekeeping(worker.store, Date.now), logger);
  const readiness = createReadiness({ database: createDatabaseReadiness(store.engine), now: Date.now, logger });
  let health: HealthServer | undefined;
  if (config.workerHealthPort !== undefined) {
    health = await startHealthServer(createHealthEndpoints({ readiness, problemTypeBase: config.errorTypeBase }), config.workerHealthPort, config.host);
  }
  let stopping = false;
  const shutdown = (signal: string) => {
    // SIGINT from a terminal and SIGTERM from a supervisor may both arrive: one shutdown.
    if (stopping) return;
    stopping = true;
    // The probe listener stays up to the exit: /livez still answers, /readyz says it is stopping.
    readiness.markShuttingDown();
    process.stdout.write(`\n${signal} received: finishing the attempts in flight...\n`);
    const forceExit = setTimeout(() => process.exit(1), DELIVERY_TIMEOUT_MS + 5000);
    forceExit.unref();
    void Promise.all([worker.stop(), jobs.stop()]).then(async () => {
      await store.close();
      process.stdout.write('Stopped.\n');
      process.exit(0);
    });
  };
  // Kept for every later signal too: a repeated one changes nothing (rather than ending the process at once).
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  // Only now: a supervisor that stops the worker as soon as it reads this line must not find the signal's default (exit at once).
  process.stdout.write(
    [
      '',
      `Webhook delivery worker ${worker.workerId} started`,
      `  database:      ${config.postgres ? `PostgreSQL at ${store.location}` : store.location}`,
      `  concurrency:   ${DEFAULT_WORKER_CONCURRENCY} attempts, at most ${DEFAULT_WORKER_CONCURRENCY - targetCap(DEFAULT_WORKER_CONCURRENCY)} to one target, ${targetCap(DEFAULT_WORKER_CONCURRENCY)} to a slow one; due retries swept every second (node-cron), new events ${config.postgres ? "at any process's commit (PostgreSQL LISTEN/NOTIFY)" : `within ${DEFAULT_COMMIT_POLL_MS} ms of any process's commit`}`,
      `  loopback URLs: ${config.webhookAllowLoopback ? 'allowed (WEBHOOK_ALLOW_LOOPBACK)' : 'refused'}`,
      `  health:        ${health ? `${health.url}/livez and ${health.url}/readyz` : 'no probe listener (set WORKER_HEALTH_PORT)'}`,
      '',
      ...(config.production && holdsDemoRecords ? [demoInProductionWarning(), ''] : []),
    ].join('\n') + '\n',
  );
}

main().catch(exitOnStartFailure);
