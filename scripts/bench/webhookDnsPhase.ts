// The webhook DNS part of the bench (issue 25, item 6): do names that resolve slowly, or to
// refused addresses, hold the other deliveries? The real worker process (`npm run worker`) is
// pointed at a local DNS server (WEBHOOK_DNS_SERVERS, slowDnsServer.ts) and delivers to a local
// receiver at http://localhost (the one name the worker answers itself). Alternating runs, each a
// new worker process in a workspace of its own:
// - alone: N good deliveries (task.created to the receiver);
// - mixed: the same N, committed in the same transaction as M bad ones (project.created to
//   subscriptions whose names the DNS server answers only after SLOW_DELAY_MS, or at once with a
//   private address), interleaved.
// Measured: from the commit to the last good delivery recorded SUCCEEDED (the good deliveries'
// time), and in the mixed runs until every bad delivery has its first attempt recorded.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { createProjectStore } from '../../src/store/projects.js';
import { createTaskStore } from '../../src/store/tasks.js';
import { sqliteWriteTransactions } from '../../src/store/writeTransactions.js';
import { loadSealingBox } from '../../src/auth/secretBox.js';
import { createWebhookSubscriptions } from '../../src/webhooks/subscriptions.js';
import { startBenchProcess, type BenchProcess } from './benchProcess.js';
import type { BenchWorkspace } from './seed.js';
import { startSlowDnsServer, type SlowDnsEntry } from './slowDnsServer.js';
import { median } from './median.js';

/** How long the DNS server takes to answer a slow name: past the resolver's own timeout (c-ares gives up after about 2 s). */
export const SLOW_DELAY_MS = 3_000;

export interface WebhookDnsFigures {
  goodDeliveries: number;
  badDeliveries: number;
  slowNames: number;
  refusedNames: number;
  runs: number;
  /** Medians of the alternating runs, milliseconds. */
  aloneMs: number;
  mixedGoodMs: number;
  mixedAllAttemptedMs: number;
  ratio: number;
  aloneRunsMs: number[];
  mixedRunsMs: number[];
  /** Queries the DNS server got per slow name in the last mixed run (one resolution per name, not per delivery). */
  queriesPerSlowName: number;
}


function startWorkerProcess(databasePath: string, dnsServer: string): Promise<BenchProcess> {
  return startBenchProcess({
    script: 'worker',
    env: { DATABASE_PATH: databasePath, WEBHOOK_SECRET_KEY: '', WEBHOOK_ALLOW_LOOPBACK: 'on', WEBHOOK_DNS_SERVERS: dnsServer },
    ready: /Webhook delivery worker wkr_\S+ started/,
    name: 'webhook DNS phase: the worker',
    stopDeadlineMs: 20_000,
  });
}

export async function measureWebhookDns(
  db: BetterSqlite3.Database,
  databasePath: string,
  workspaces: BenchWorkspace[],
  options: { good?: number; slowNames?: number; refusedNames?: number; perName?: number; runs?: number } = {},
): Promise<WebhookDnsFigures> {
  const good = options.good ?? 450;
  const slowNames = options.slowNames ?? 5;
  const refusedNames = options.refusedNames ?? 5;
  const perName = options.perName ?? 5;
  const runs = options.runs ?? 3;
  const bad = (slowNames + refusedNames) * perName;
  if (workspaces.length < 2 * runs) throw new Error(`webhook DNS phase: ${2 * runs} workspaces needed, ${workspaces.length} given`);

  const table: Record<string, SlowDnsEntry> = {};
  for (let index = 0; index < slowNames; index += 1) table[`slow-${index}.bench.test`] = { addresses: ['10.9.0.1'], delayMs: SLOW_DELAY_MS };
  for (let index = 0; index < refusedNames; index += 1) table[`private-${index}.bench.test`] = { addresses: [`192.168.0.${index + 1}`], delayMs: 0 };
  const dns = await startSlowDnsServer(table);
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const goodUrl = `http://localhost:${(receiver.address() as AddressInfo).port}/hooks`;
  const secretBox = loadSealingBox({ webhookSecretKey: undefined, dataDirectory: path.dirname(databasePath) });
  // Created without resolution: the bad names must reach the worker (as names that change their answers after creation would).
  const subscriptions = createWebhookSubscriptions(db, { secretBox, allowLoopback: true, resolver: false });
  const tasks = createTaskStore(db);
  const projects = createProjectStore(db);
  const countStatus = db.prepare(`SELECT count(*) FROM webhook_deliveries WHERE subscription_id = ? AND status = 'SUCCEEDED'`).pluck();
  const countAttempted = db.prepare(`SELECT count(*) FROM webhook_deliveries WHERE subscription_id = ? AND attempt_count > 0`).pluck();

  async function run(workspace: BenchWorkspace, mixed: boolean): Promise<{ goodMs: number; allMs: number }> {
    const fast = await subscriptions.createWebhook(workspace.workspaceId, { url: goodUrl, eventTypes: ['task.created'] });
    const badIds: string[] = [];
    if (mixed) {
      for (const name of Object.keys(table)) {
        badIds.push((await subscriptions.createWebhook(workspace.workspaceId, { url: `https://${name}/hooks`, eventTypes: ['project.created'] })).webhook.id);
      }
    }
    const actor = { id: workspace.ownerId, kind: 'USER' as const };
    const worker = await startWorkerProcess(databasePath, dns.address);
    try {
      // Bad deliveries spread among the good ones, all committed at once.
      const every = mixed ? Math.max(1, Math.floor(good / perName)) : Number.POSITIVE_INFINITY;
      await sqliteWriteTransactions(db).write(async () => {
        for (let index = 0; index < good; index += 1) {
          if (index % every === 0) await projects.createProject(workspace.workspaceId, { name: `DNS bench ${index}` }, actor);
          await tasks.createTask(workspace.workspaceId, { projectId: workspace.projectId, title: `DNS bench ${index}` }, actor);
        }
      });
      const started = performance.now();
      let goodMs = 0;
      const deadline = Date.now() + 120_000;
      for (;;) {
        const succeeded = countStatus.get(fast.webhook.id) as number;
        if (goodMs === 0 && succeeded >= good) goodMs = performance.now() - started;
        const attempted = badIds.reduce((sum, id) => sum + (countAttempted.get(id) as number), 0);
        if (goodMs > 0 && attempted >= bad * (mixed ? 1 : 0)) return { goodMs, allMs: performance.now() - started };
        if (Date.now() > deadline) throw new Error(`webhook DNS phase: ${succeeded} of ${good} good deliveries and ${attempted} of ${mixed ? bad : 0} bad attempts after 120 s`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    } finally {
      await worker.stop();
    }
  }

  const alone: number[] = [];
  const mixedGood: number[] = [];
  const mixedAll: number[] = [];
  try {
    for (let index = 0; index < runs; index += 1) {
      alone.push((await run(workspaces[2 * index]!, false)).goodMs);
      dns.queries.clear();
      const mixed = await run(workspaces[2 * index + 1]!, true);
      mixedGood.push(mixed.goodMs);
      mixedAll.push(mixed.allMs);
    }
  } finally {
    await dns.close();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
  const slowQueries = [...dns.queries.entries()].filter(([name]) => name.startsWith('slow-')).map(([, count]) => count);
  return {
    goodDeliveries: good,
    badDeliveries: bad,
    slowNames,
    refusedNames,
    runs,
    aloneMs: Math.round(median(alone)),
    mixedGoodMs: Math.round(median(mixedGood)),
    mixedAllAttemptedMs: Math.round(median(mixedAll)),
    ratio: median(mixedGood) / median(alone),
    aloneRunsMs: alone.map(Math.round),
    mixedRunsMs: mixedGood.map(Math.round),
    queriesPerSlowName: slowQueries.length > 0 ? Math.max(...slowQueries) : 0,
  };
}
