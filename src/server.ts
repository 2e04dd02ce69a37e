import { environmentHelp, exitOnStartFailure, loadConfig, redactedRedisUrl, requireSharedSecrets, type Config } from './config.js';
import { startApp } from './app.js';
import { createJsonLogger } from './logger.js';
import { openStore } from './openStore.js';
import type { DemoFixture } from './demo/demoData.js';
import { createTenantStore } from './store/tenants.js';
import { staleContractReason } from './contract/specsHash.js';
import { projectRoot } from './projectFiles.js';
import { checkDemoDataInProduction, checkFileModes, checkHandlerFiles, demoInProductionWarning, fixedFileModesNotice } from './startChecks.js';

const HELP = `Usage: npm start

Starts the API server: the Published Portfolio Read API under /api/v1 and the Work-Platform API under /v1.
On an empty database it loads the demo data set and prints a demo API key.
Refuses to start when specs/ changed since generated/ was built (run npm run build:contract, or use
npm run dev, which rebuilds and restarts on every save).

Environment variables:
${environmentHelp()}
`;

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(HELP);
    return;
  }
  // npm run dev starts the next server ahead of time: it loads its modules (most of a start) and waits to be told to start.
  if (process.env.DEV_SERVER_STANDBY === 'on' && process.send) await startMessage();
  // Before anything is opened: generated/ built from other specs would be served as the contract.
  const stale = staleContractReason(projectRoot);
  if (stale) {
    process.stderr.write(`Not starting: ${stale}\n`);
    process.exitCode = 1;
    return;
  }
  const config = loadConfig();
  requireSharedSecrets(config);
  // Everything that can refuse the start, before anything is created, migrated or loaded.
  checkHandlerFiles();
  const fixedModes = checkFileModes(config);
  if (fixedModes.length > 0) process.stdout.write(`${fixedFileModesNotice(fixedModes)}\n`);
  const { holdsDemoRecords } = await checkDemoDataInProduction(config);

  const logger = createJsonLogger();
  const store = await openStore(config, logger);
  let demo: DemoFixture | undefined;
  // Loaded only for an empty SQLite database: the importer (HTML sanitizer included) is not needed to serve.
  // Several PostgreSQL instances would race to load it: there an operator creates tenants and keys (npm run admin).
  if (config.loadDemoData && store.sqlite && (await createTenantStore(store.engine).listTenants()).length === 0) {
    const { loadDemoData } = await import('./demo/demoData.js');
    demo = await loadDemoData(store.sqlite, Date.now);
  }
  const app = await startApp(config, { logger, store });

  let stopping = false;
  const drain = () => {
    process.stdout.write('Draining: no new connections; finishing open requests and webhook attempts, closing the database...\n');
    // Longer than one webhook attempt (10 s), which close() waits for.
    const forceExit = setTimeout(() => process.exit(1), 15_000);
    forceExit.unref();
    const closed = app.close();
    // close() has stopped listening: npm run dev (a cluster worker) says serving on the new server only once this one
    // takes no new connection.
    process.send?.({ kind: 'stopped-listening' });
    void closed
      .then(() => store.close())
      .then(() => {
        process.stdout.write('Stopped.\n');
        process.exit(0);
      });
  };
  const shutdown = (signal: string) => {
    // SIGINT from a terminal and SIGTERM from a supervisor may both arrive, and a supervisor may repeat its signal: one
    // shutdown, and no later signal changes it (the listeners stay, so none meets the default action of ending at once).
    if (stopping) return;
    stopping = true;
    // At once: load balancers learn from /readyz that this instance is going before it stops accepting.
    app.markShuttingDown();
    if (config.shutdownDelayMs === 0) {
      process.stdout.write(`\n${signal} received.\n`);
      drain();
      return;
    }
    process.stdout.write(`\n${signal} received: /readyz answers 503; serving for ${config.shutdownDelayMs} ms more (SHUTDOWN_DELAY_MS) before draining.\n`);
    setTimeout(drain, config.shutdownDelayMs);
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  // Only now: a supervisor that stops the server as soon as it reads the banner must not find the signal's default (exit at once).
  printBanner(app.url, app.publicBaseUrl, config, store.location, demo, holdsDemoRecords);
  // Started by npm run dev (a cluster worker): it swaps servers once this one serves.
  process.send?.({ kind: 'server-ready', url: app.url, publicBaseUrl: app.publicBaseUrl });
}

function startMessage(): Promise<void> {
  return new Promise((resolve) => {
    const onMessage = (message: unknown) => {
      if (typeof message !== 'object' || message === null || (message as { kind?: unknown }).kind !== 'start') return;
      process.off('message', onMessage);
      resolve();
    };
    process.on('message', onMessage);
    // Only now: a message that arrives before anyone listens is dropped.
    process.send!({ kind: 'standby-waiting' });
  });
}

/**
 * The address the server really binds: every interface for 0.0.0.0 or ::, said in words, and the
 * loopback URL to try from this machine; the public base URL, what clients are told, is a line of its own.
 */
function boundAddress(host: string, url: string): string {
  // Read from the end: `url` is written from HOST, which may be an IPv6 address.
  const port = /:(\d+)\/?$/.exec(url)?.[1] ?? '';
  if (host === '0.0.0.0') return `http://0.0.0.0:${port} (every IPv4 interface; from this machine: http://127.0.0.1:${port})`;
  if (host === '::' || host === '[::]') return `http://[::]:${port} (every interface; from this machine: http://[::1]:${port})`;
  return url;
}

function printBanner(url: string, publicBaseUrl: string, config: Config, database: string, demo: DemoFixture | undefined, holdsDemoRecords: boolean): void {
  const lines = [
    '',
    `Contract API server listening on ${boundAddress(config.host, url)}`,
    `  database:        ${config.postgres ? `PostgreSQL at ${database}` : database}`,
    `  public base URL: ${publicBaseUrl}`,
    `  index: ${publicBaseUrl}/  probes: ${publicBaseUrl}/livez, ${publicBaseUrl}/readyz`,
    `  rate limits and quota: ${config.redis ? `Redis at ${redactedRedisUrl(config.redis.url)} (keys ${config.redis.keyPrefix}…)` : 'in the database'}`,
    '',
    'Published Portfolio Read API (/api/v1):',
    `  reference: ${publicBaseUrl}/api/v1/docs`,
    `  ${publicBaseUrl}/api/v1/openapi.json`,
    `  ${publicBaseUrl}/api/v1/openapi.yaml`,
    `  ${publicBaseUrl}/api/v1/postman.json`,
    '',
    'Work-Platform API (/v1):',
    `  reference: ${publicBaseUrl}/v1/docs`,
    `  ${publicBaseUrl}/v1/openapi.json  (also openapi.yaml, postman.json, postman-environment.json)`,
    `  agent tools (MCP, Streamable HTTP): ${publicBaseUrl}/v1/mcp  (stdio: WORK_PLATFORM_TOKEN=<token> npm run --silent mcp -- --base-url ${publicBaseUrl})`,
    config.webhookWorker
      ? '  webhook delivery worker: running in this process (WEBHOOK_WORKER=off to run it apart with npm run worker)'
      : '  webhook delivery worker: not in this process (WEBHOOK_WORKER=off); run npm run worker',
    ...(config.webhookAllowLoopback ? ['  WEBHOOK_ALLOW_LOOPBACK is on: loopback webhook targets are accepted. Development only.'] : []),
    '',
  ];
  if (demo) {
    const { apiKey, tenantId } = demo.portfolio;
    lines.push(
      'Demo data loaded into the empty database. Demo key of tenant ' + tenantId + ' (shown only now):',
      `  "apiKey": "${apiKey}"`,
      `  try: curl -H "Authorization: Bearer ${apiKey}" ${publicBaseUrl}/api/v1/portfolio`,
      `Demo Personal Access Token of workspace ${demo.workPlatform.workspaceId}, every scope (shown only now):`,
      `  try: curl -H "Authorization: Bearer ${demo.workPlatform.tokens.all}" "${publicBaseUrl}/v1/tasks?limit=5"`,
      `  AI (${config.ai.provider === 'offline' ? 'the offline rules, AI_PROVIDER=offline' : `${config.ai.model} at AI_BASE_URL`}): curl -X POST -H "Authorization: Bearer ${demo.workPlatform.tokens.all}" \\`,
      `    -H "content-type: application/json" -d '{"projectId":"${demo.workPlatform.projectId}"}' ${publicBaseUrl}/v1/ai/project-summaries`,
      `Demo webhook subscription ${demo.workPlatform.webhook.id} → ${demo.workPlatform.webhook.url} (a placeholder address:`,
      '  its deliveries fail and are retried; see GET /v1/webhooks/<id>/deliveries).',
      `Demo OAuth 2.0 client ${demo.workPlatform.oauthClient.id} (public, PKCE; redirect URI ${demo.workPlatform.oauthClient.redirectUri}):`,
      `  metadata: ${new URL(publicBaseUrl).origin}/.well-known/oauth-authorization-server  (docs/oauth.md walks through the flow with curl)`,
      `  sign in on the consent page with the owner's session token (24 h, shown only now):`,
      `  ${demo.workPlatform.tokens.session}`,
      '  More demo keys and tokens: npm run --silent admin -- demo --json (issues fresh ones).',
      '',
    );
  } else if (holdsDemoRecords) {
    // Loaded by an earlier start (whose banner may be lost, or which failed after loading) or by npm run admin -- demo.
    lines.push(
      'This database holds the demo data set; its keys and tokens were shown only when it was loaded.',
      '  Fresh demo keys and tokens (earlier ones stay valid): npm run --silent admin -- demo --json',
      '',
    );
  } else {
    lines.push('Create an API key with: npm run admin -- key create --tenant <tenant id>  (tenants: npm run admin -- tenant list)', '');
  }
  if (config.production && (demo || holdsDemoRecords)) lines.push(demoInProductionWarning(), '');
  process.stdout.write(lines.join('\n') + '\n');
}

main().catch(exitOnStartFailure);
