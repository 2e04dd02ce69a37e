// The webhook part of the bench: events committed through the task store (so the outbox and the
// fan-out run as in production), delivered by the real worker process (`src/worker.ts`, as
// `npm run worker` starts it) to a local receiver that verifies every signature. Throughput: N
// events committed at once, then drained until every delivery is received and recorded SUCCEEDED.
// Latency: events committed one at a time while the worker runs, from the event's commit time (its
// occurred_at) to receipt.
//
// The worker is the child and the receiver stays here: the worker is what is measured, so it runs
// as deployed, alone in its process on its own core and its own database connection (it learns of
// commits only through the database, as beside a server). The receiver stands in for a subscriber;
// keeping it here keeps the counts, the duplicate check and the receipt times in the process that
// commits, so commit → receipt needs no clock shared across processes.
import { sqliteWriteTransactions } from '../../src/store/writeTransactions.js';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { createTaskStore } from '../../src/store/tasks.js';
import { createWebhookSubscriptions } from '../../src/webhooks/subscriptions.js';
import { loadSealingBox } from '../../src/auth/secretBox.js';
import { verifyWebhook } from '../../src/webhooks/verifyWebhook.js';
import type { BenchWorkspace } from './seed.js';
import { startBenchProcess, type BenchProcess } from './benchProcess.js';

export interface WebhookFigures {
  events: number;
  deliveriesPerSecond: number;
  latencyEvents: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  refused: number;
  /** Requests for an event already received (deliveries are at least once; a healthy run has none). */
  duplicates: number;
}

export interface WebhookPhaseOptions {
  /** Node options for the worker process, e.g. `['--cpu-prof', '--cpu-prof-dir', dir]`. */
  workerNodeArguments?: string[];
}


const readBody = (req: IncomingMessage) =>
  new Promise<Buffer>((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk)).on('end', () => resolve(Buffer.concat(chunks)));
  });

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

/**
 * `npm run worker` on the bench database. It opens the signing secrets with the key file of the
 * database's folder (WEBHOOK_SECRET_KEY emptied, so a key in the bench's own environment cannot
 * differ from the one the subscription was sealed with).
 */
function startWorkerProcess(databasePath: string, nodeArguments: string[]): Promise<BenchProcess> {
  return startBenchProcess({
    script: 'worker',
    nodeArguments,
    env: { DATABASE_PATH: databasePath, WEBHOOK_SECRET_KEY: '', WEBHOOK_ALLOW_LOOPBACK: 'on' },
    ready: /Webhook delivery worker wkr_\S+ started/,
    name: 'webhook phase: the worker',
    // The worker's own forced exit comes 15 s after SIGTERM (the delivery timeout plus 5 s).
    stopDeadlineMs: 20_000,
  });
}

export async function measureWebhooks(
  db: BetterSqlite3.Database,
  databasePath: string,
  workspace: BenchWorkspace,
  events: number,
  options: WebhookPhaseOptions = {},
): Promise<WebhookFigures> {
  const secretBox = loadSealingBox({ webhookSecretKey: undefined, dataDirectory: path.dirname(databasePath) });
  const received = new Map<string, number>();
  let refused = 0;
  let duplicates = 0;
  let secret = '';
  const receiver = createServer((req, res) => {
    void readBody(req).then((body) => {
      try {
        const event = verifyWebhook(body, req.headers, secret);
        if (received.has(event.id)) duplicates += 1;
        else received.set(event.id, Date.now());
        res.writeHead(204).end();
      } catch {
        refused += 1;
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  const subscriptions = createWebhookSubscriptions(db, { secretBox, allowLoopback: true, resolver: false });
  const created = await subscriptions.createWebhook(workspace.workspaceId, { url, eventTypes: ['task.created'] });
  secret = created.secret;
  const tasks = createTaskStore(db);
  const actor = { id: workspace.ownerId, kind: 'USER' as const };
  const succeeded = db.prepare(`SELECT count(*) AS count FROM webhook_deliveries WHERE subscription_id = ? AND status = 'SUCCEEDED'`);
  const recordedSucceeded = () => (succeeded.get(created.webhook.id) as { count: number }).count;

  // A deadline, so that a worker that stops delivering breaks the bench instead of hanging it.
  const waitFor = async (condition: () => boolean, count: number, what: string) => {
    const deadline = Date.now() + Math.max(60_000, count * 20);
    while (!condition()) {
      if (Date.now() > deadline) {
        throw new Error(`webhook phase: ${received.size + refused} of ${count} ${what} arrived, ${recordedSucceeded()} recorded, before the deadline`);
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  const worker = await startWorkerProcess(databasePath, options.workerNodeArguments ?? []);
  try {
    // One transaction (taking the write lock at its start: the worker writes meanwhile) for every event at once.
    await sqliteWriteTransactions(db).write(async () => {
      for (let index = 0; index < events; index += 1) await tasks.createTask(workspace.workspaceId, { projectId: workspace.projectId, title: `Webhook bench ${index}` }, actor);
    });
    const started = performance.now();
    await waitFor(() => received.size + refused >= events, events, 'deliveries');
    // Done means durable: every attempt recorded, as a crash after receipt would otherwise repeat it.
    await waitFor(() => recordedSucceeded() >= events, events, 'deliveries (recorded)');
    const seconds = (performance.now() - started) / 1000;

    const latencyEvents = Math.min(500, events);
    const latencyTasks = new Set<string>();
    const before = received.size + refused;
    for (let index = 0; index < latencyEvents; index += 1) {
      latencyTasks.add((await tasks.createTask(workspace.workspaceId, { projectId: workspace.projectId, title: `Latency ${index}` }, actor)).id);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await waitFor(() => received.size + refused >= before + latencyEvents, before + latencyEvents, 'deliveries (latency part)');
    const rows = db
      .prepare(
        `SELECT id, occurred_at AS occurredAt, json_extract(payload, '$.data.object.id') AS taskId FROM events WHERE type = 'task.created' AND workspace_id = ?`,
      )
      .all(workspace.workspaceId) as { id: string; occurredAt: number; taskId: string }[];
    // From the event's own timestamp (occurred_at, written in the committing transaction) to receipt.
    const latencies = rows
      .filter((row) => latencyTasks.has(row.taskId) && received.has(row.id))
      .map((row) => received.get(row.id)! - row.occurredAt)
      .sort((a, b) => a - b);
    return {
      events,
      deliveriesPerSecond: Math.round(events / seconds),
      latencyEvents: latencies.length,
      latencyP50Ms: percentile(latencies, 50),
      latencyP99Ms: percentile(latencies, 99),
      refused,
      duplicates,
    };
  } finally {
    await worker.stop();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
}
