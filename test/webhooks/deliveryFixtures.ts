// Fixtures of the delivery tests: a workspace with a project on a real SQLite file, subscriptions
// sealed with a secret box, a receiver on port 0 whose answer the test switches, and a clock.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type BetterSqlite3 from 'better-sqlite3';
import { webhookSubscriptions } from '../../db/schema.js';
import { drizzleFor } from '../../src/store/drizzle.js';
import { newId } from '../../src/store/ids.js';
import { createProjectStore } from '../../src/store/projects.js';
import { createTaskStore, type Task } from '../../src/store/tasks.js';
import { createSecretBox, type SecretBox } from '../../src/auth/secretBox.js';
import { newSigningSecret } from '../../src/webhooks/signing.js';
import { makeDatabase, type TempDatabase } from '../store/factories.js';
import { makeWorkspace, type WorkspaceFixture } from '../store/workPlatformFactories.js';

/** A fixed key: the tests seal and the worker opens with the same box. */
export const testSecretBox: SecretBox = createSecretBox(Buffer.alloc(32, 7));

/** A controllable clock in milliseconds, starting at 2026-11-23T09:00:00.000Z. */
export function makeClock(start = Date.UTC(2026, 10, 23, 9, 0, 0)) {
  const clock = {
    ms: start,
    now: () => clock.ms,
    advance(ms: number) {
      clock.ms += ms;
    },
    set(ms: number) {
      clock.ms = ms;
    },
  };
  return clock;
}
export type Clock = ReturnType<typeof makeClock>;

export interface DeliveryFixture extends TempDatabase {
  clock: Clock;
  workspace: WorkspaceFixture;
  projectId: string;
  /** Creates a task through the task store (one task.created event in its transaction). */
  createTask(title?: string): Promise<Task>;
  /** Moves a task to DONE (task.updated and task.completed). */
  completeTask(task: Task): Promise<Task>;
}

export async function makeDeliveryFixture(clock: Clock = makeClock()): Promise<DeliveryFixture> {
  const database = makeDatabase();
  const workspace = await makeWorkspace(database.db, { now: clock.now });
  const projects = createProjectStore(database.db, { now: clock.now });
  const tasks = createTaskStore(database.db, { now: clock.now });
  const projectId = (await projects.createProject(workspace.workspaceId, { name: 'Deliveries' }, workspace.actor)).id;
  // The project.created event above has no subscriber yet: no delivery.
  let counter = 0;
  return {
    ...database,
    clock,
    workspace,
    projectId,
    createTask(title = `Task ${++counter}`) {
      return tasks.createTask(workspace.workspaceId, { projectId, title }, workspace.actor);
    },
    completeTask(task) {
      return tasks.updateTask(workspace.workspaceId, task.id, { status: 'DONE' }, task.version, workspace.actor);
    },
  };
}

export interface SubscriptionInput {
  workspaceId: string;
  url: string;
  eventTypes?: string[];
  status?: 'ACTIVE' | 'DISABLED';
  /** The current secret (a new one by default). */
  secret?: string;
  /** A rotation's previous secret and when it stops signing. */
  previous?: { secret: string; expiresAt: number };
  now?: number;
}

/** Inserts a subscription row the way the API stores one: secrets sealed with its id as context. */
export function insertSubscription(db: BetterSqlite3.Database, input: SubscriptionInput, box: SecretBox = testSecretBox): { id: string; secret: string } {
  const id = newId('whk');
  const secret = input.secret ?? newSigningSecret();
  const at = input.now ?? Date.now();
  const disabled = input.status === 'DISABLED';
  drizzleFor(db)
    .insert(webhookSubscriptions)
    .values({
      id,
      workspaceId: input.workspaceId,
      url: input.url,
      description: null,
      eventTypes: JSON.stringify(input.eventTypes ?? ['task.created', 'task.completed']),
      status: input.status ?? 'ACTIVE',
      disabledCode: disabled ? 'MANUAL' : null,
      disabledMessage: disabled ? 'Disabled by a test.' : null,
      disabledAt: disabled ? at : null,
      consecutiveFailedEvents: 0,
      signingKeyVersion: input.previous ? 2 : 1,
      sealedSecret: box.seal(secret, id),
      sealedPreviousSecret: input.previous ? box.seal(input.previous.secret, id) : null,
      previousSecretExpiresAt: input.previous?.expiresAt ?? null,
      version: 1,
      createdAt: at,
      updatedAt: at,
    })
    .run();
  return { id, secret };
}

export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  /** Header names exactly as sent (rawHeaders), in order. */
  headerNames: string[];
  body: Buffer;
  method: string;
  url: string;
}

/** What the receiver does with one request. */
export type ReceiverAnswer =
  | { status: number; headers?: Record<string, string>; body?: string; delayMs?: number }
  /** Read the request and never answer. */
  | 'hang'
  /** Drop the connection without an answer. */
  | 'reset';

export interface Receiver {
  url: string;
  port: number;
  received: ReceivedDelivery[];
  /** Decides the answer to each request; 204 by default. */
  answer: (delivery: ReceivedDelivery) => ReceiverAnswer;
  /** Answers 204 to every request it holds ('hang') so far. */
  releaseHeld(): void;
  close(): Promise<void>;
}

export async function startReceiver(path = '/hooks'): Promise<Receiver> {
  const sockets = new Set<Socket>();
  const held: ServerResponse[] = [];
  const receiver: Receiver = {
    url: '',
    port: 0,
    received: [],
    answer: () => ({ status: 204 }),
    releaseHeld: () => {
      for (const res of held.splice(0)) if (!res.destroyed) res.writeHead(204).end();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const delivery: ReceivedDelivery = {
        headers: req.headers,
        headerNames: req.rawHeaders.filter((_, index) => index % 2 === 0),
        body: Buffer.concat(chunks),
        method: req.method ?? '',
        url: req.url ?? '',
      };
      receiver.received.push(delivery);
      const answer = receiver.answer(delivery);
      if (answer === 'hang') {
        held.push(res);
        return;
      }
      if (answer === 'reset') {
        req.socket.destroy();
        return;
      }
      const send = () => {
        res.writeHead(answer.status, answer.headers ?? {});
        res.end(answer.body ?? '');
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}${path}`;
  return receiver;
}

/** A port on which nothing listens (bound once, then closed). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Delivery rows of one subscription in insertion order. */
export function deliveriesOf(db: BetterSqlite3.Database, subscriptionId: string) {
  return db
    .prepare('SELECT * FROM webhook_deliveries WHERE subscription_id = ? ORDER BY rowid')
    .all(subscriptionId) as Array<{
    id: string;
    event_id: string;
    event_type: string;
    status: string;
    attempt_count: number;
    next_attempt_at: number | null;
    lease_owner: string | null;
    lease_expires_at: number | null;
    completed_at: number | null;
    replay: number;
    created_at: number;
  }>;
}

export function attemptsOf(db: BetterSqlite3.Database, deliveryId: string) {
  return db.prepare('SELECT * FROM webhook_attempts WHERE delivery_id = ? ORDER BY number').all(deliveryId) as Array<{
    number: number;
    attempted_at: number;
    duration_ms: number;
    status_code: number | null;
    error_code: string | null;
    error_message: string | null;
    succeeded: number;
    next_attempt_at: number | null;
  }>;
}

export function subscriptionRow(db: BetterSqlite3.Database, id: string) {
  return db.prepare('SELECT * FROM webhook_subscriptions WHERE id = ?').get(id) as {
    status: string;
    disabled_code: string | null;
    disabled_message: string | null;
    disabled_at: number | null;
    consecutive_failed_events: number;
    version: number;
    updated_at: number;
    sealed_secret: string;
    sealed_previous_secret: string | null;
    previous_secret_expires_at: number | null;
  };
}

/**
 * Waits for something another process or the event loop brings about (a delivery arriving at the
 * receiver, a row changing); fails naming `what` after `timeoutMs`, checking every `intervalMs`.
 */
export async function waitFor(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 5000, intervalMs = 10): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export { newId };
