// The webhook part of the bench: events committed through the task store (so the outbox and the
// fan-out run as in production), delivered by the real worker to a local receiver that verifies
// every signature. Throughput: N events committed at once, then drained. Latency: events committed
// one at a time while the worker runs, from the event's commit time (its occurred_at) to receipt.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { createJsonLogger } from '../../src/logger.js';
import { createTaskStore } from '../../src/store/tasks.js';
import { createWebhookSubscriptionStore } from '../../src/store/webhookSubscriptions.js';
import { createDeliveryWorker } from '../../src/webhooks/deliveryWorker.js';
import { loadWebhookSecretBox } from '../../src/webhooks/secretBox.js';
import { verifyWebhook } from '../../src/webhooks/verifyWebhook.js';
import type { BenchWorkspace } from './seed.js';

export interface WebhookFigures {
  events: number;
  deliveriesPerSecond: number;
  latencyEvents: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  refused: number;
}

const readBody = (req: IncomingMessage) =>
  new Promise<Buffer>((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk)).on('end', () => resolve(Buffer.concat(chunks)));
  });

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

export async function measureWebhooks(db: BetterSqlite3.Database, databasePath: string, workspace: BenchWorkspace, events: number): Promise<WebhookFigures> {
  const secretBox = loadWebhookSecretBox({ webhookSecretKey: undefined, dataDirectory: path.dirname(databasePath) });
  const received = new Map<string, number>();
  let refused = 0;
  let secret = '';
  const receiver = createServer((req, res) => {
    void readBody(req).then((body) => {
      try {
        const event = verifyWebhook(body, req.headers, secret);
        if (!received.has(event.id)) received.set(event.id, Date.now());
        res.writeHead(204).end();
      } catch {
        refused += 1;
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  const subscriptions = createWebhookSubscriptionStore(db, { secretBox, allowLoopback: true });
  const created = subscriptions.createWebhook(workspace.workspaceId, { url, eventTypes: ['task.created'] });
  secret = created.secret;
  const tasks = createTaskStore(db);
  const actor = { id: workspace.ownerId, kind: 'USER' as const };
  const quietLogger = createJsonLogger({ out: () => {}, err: (line) => process.stderr.write(line) });
  const worker = createDeliveryWorker({ db, secretBox, logger: quietLogger, allowLoopback: true });

  // A deadline, so that a worker that stops delivering breaks the bench instead of hanging it.
  const waitFor = async (count: number, what: string) => {
    const deadline = Date.now() + Math.max(60_000, count * 20);
    while (received.size + refused < count) {
      if (Date.now() > deadline) throw new Error(`webhook phase: ${received.size + refused} of ${count} ${what} arrived before the deadline`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  try {
    db.transaction(() => {
      for (let index = 0; index < events; index += 1) tasks.createTask(workspace.workspaceId, { projectId: workspace.projectId, title: `Webhook bench ${index}` }, actor);
    })();
    const started = performance.now();
    worker.start();
    await waitFor(events, 'deliveries');
    const seconds = (performance.now() - started) / 1000;

    const latencyEvents = Math.min(500, events);
    const latencyTasks = new Set<string>();
    const before = received.size;
    for (let index = 0; index < latencyEvents; index += 1) {
      db.transaction(() => {
        latencyTasks.add(tasks.createTask(workspace.workspaceId, { projectId: workspace.projectId, title: `Latency ${index}` }, actor).id);
      })();
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await waitFor(before + latencyEvents, 'deliveries (latency part)');
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
    };
  } finally {
    await worker.stop();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
}
