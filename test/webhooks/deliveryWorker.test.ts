import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Stripe from 'stripe';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAjv2020 } from '../../src/contract/ajv.js';
import { openDatabase } from '../../src/store/database.js';
import { createTaskStore } from '../../src/store/tasks.js';
import { createWebhookDeliveryStore, DELIVERY_LEASE_MS, WEBHOOK_LOG_RETENTION_MS } from '../../src/store/webhookDeliveries.js';
import { workPlatformPlanTable } from '../../src/limits/planLimits.js';

const planDefaultRetryDelays = workPlatformPlanTable().webhookRetryDelaysSeconds;
import { createWorkspaceStore } from '../../src/store/workspaces.js';
import { validate as validateCron } from 'node-cron';
import { webhookHousekeeping } from '../../src/scheduledJobs.js';
import { LEASE_MARGIN_MS, TARGET_NOT_PUBLIC_MESSAGE, TARGET_UNRESOLVABLE_MESSAGE } from '../../src/webhooks/worker/deliveryAttempt.js';
import { createDeliveryWorker, SLOW_TARGET_MS, TARGET_BUSY_DEFER_MS, targetCap, targetKey, type DeliveryWorker, type DeliveryWorkerOptions } from '../../src/webhooks/worker/deliveryLoop.js';
import { createDeliveryAgents, MAX_RESPONSE_BYTES, sendDeliveryRequest } from '../../src/webhooks/deliveryRequest.js';
import { createSecretBox, type SecretBox } from '../../src/auth/secretBox.js';
import { createWebhookSubscriptions } from '../../src/webhooks/subscriptions.js';
import { DEFAULT_WEBHOOK_USER_AGENT } from '../../src/webhooks/signing.js';
import type { LookupAll } from '../../src/webhooks/targetGuard.js';
import { createHostResolver } from '../../src/webhooks/hostResolver.js';
import { fakeDnsResolver } from '../support/fakeDns.js';
import { verifyWebhook } from '../../src/webhooks/verifyWebhook.js';
import { selfSignedCertificate } from '../support/serverProcess.js';
import { memoryLogger } from '../support/testApp.js';
import { repoRoot } from '../store/factories.js';
import {
  attemptsOf,
  closedPort,
  deliveriesOf,
  insertSubscription,
  makeDeliveryFixture,
  startReceiver,
  subscriptionRow,
  testSecretBox,
  waitFor,
  type DeliveryFixture,
  type Receiver,
} from './deliveryFixtures.js';

const contract = JSON.parse(readFileSync(path.join(repoRoot, 'generated/work-platform/openapi.json'), 'utf8')) as { webhooks: Record<string, unknown> };
const ajv = createAjv2020({ validateSchema: false });
ajv.addSchema(contract, 'work-platform');
function validateEnvelope(type: string, envelope: unknown): string | null {
  const validate = ajv.compile({ $ref: `work-platform#/webhooks/${type}/post/requestBody/content/application~1json/schema` });
  return validate(envelope) ? null : ajv.errorsText(validate.errors);
}
/** Every header parameter the contract's webhook operation declares: present when required, and matching its schema. */
function headerProblems(type: string, headers: Record<string, string | string[] | undefined>): string[] {
  const document = contract as unknown as { webhooks: Record<string, { post: { parameters: { $ref: string }[] } }>; components: { parameters: Record<string, unknown> } };
  const problems: string[] = [];
  for (const { $ref } of document.webhooks[type]!.post.parameters) {
    const parameter = document.components.parameters[$ref.split('/').pop()!] as { name: string; in: string; required?: boolean; schema: object };
    if (parameter.in !== 'header') continue;
    const value = headers[parameter.name.toLowerCase()];
    if (value === undefined) {
      if (parameter.required) problems.push(`${parameter.name} missing`);
      continue;
    }
    const validate = ajv.compile(parameter.schema);
    if (!validate(value)) problems.push(`${parameter.name}: ${ajv.errorsText(validate.errors)}`);
  }
  return problems;
}

let fx: DeliveryFixture;
let receiver: Receiver;
let logLines: string[];
const cleanups: Array<() => unknown> = [];

async function setUp(): Promise<void> {
  fx = await makeDeliveryFixture();
  receiver = await startReceiver();
  logLines = [];
}
afterEach(async () => {
  await receiver?.close();
  for (const cleanup of cleanups.splice(0)) await cleanup();
  fx?.cleanup();
});

/** A worker on the test database, clock and receiver; it claims only when started or woken (no sweep, no commit poll). */
function worker(options: Partial<DeliveryWorkerOptions> = {}) {
  const created = createDeliveryWorker({
    db: fx.db,
    secretBox: testSecretBox,
    logger: memoryLogger(logLines),
    allowLoopback: true,
    now: fx.clock.now,
    random: () => 0.5,
    workerId: 'wkr_test',
    retrySweep: false,
    commitPollMs: false,
    ...options,
  });
  cleanups.push(() => created.stop());
  return created;
}

/**
 * Runs the workers' loops until each is idle: everything due at the injected clock's time is
 * attempted and recorded; then stops them. Answers how many requests reached the receiver meanwhile.
 */
async function deliverDueTogether(workers: DeliveryWorker[]): Promise<number> {
  const before = receiver.received.length;
  for (const w of workers) await w.start();
  await Promise.all(workers.map((w) => w.idle()));
  await Promise.all(workers.map((w) => w.stop()));
  return receiver.received.length - before;
}
const deliverDue = (w: DeliveryWorker = worker()) => deliverDueTogether([w]);

function subscribe({ box, ...extra }: Partial<Parameters<typeof insertSubscription>[1]> & { box?: SecretBox } = {}) {
  return insertSubscription(fx.db, { workspaceId: fx.workspace.workspaceId, url: receiver.url, now: fx.clock.now(), ...extra }, box);
}

/** Runs the jobs one after another, as their schedules would: what each answered. */
async function runEach(jobs: { run(): number | Promise<number> }[]): Promise<number[]> {
  const answers: number[] = [];
  for (const job of jobs) answers.push(await job.run());
  return answers;
}

const header = (value: string | string[] | undefined): string => (Array.isArray(value) ? value.join(',') : (value ?? ''));

describe('a successful delivery', () => {
  it('POSTs the exact envelope bytes with exactly the seed headers; verifyWebhook, Stripe and the contract accept it', async () => {
    await setUp();
    const { id: subscriptionId, secret } = subscribe({ eventTypes: ['task.created', 'task.completed'] });
    const task = await fx.createTask('Ship the worker');
    await fx.completeTask(task);
    expect(await deliverDue()).toBe(2);

    const events = fx.db.prepare('SELECT id, type, payload FROM events WHERE type IN (?, ?) ORDER BY rowid').all('task.created', 'task.completed') as {
      id: string;
      type: string;
      payload: string;
    }[];
    const deliveries = deliveriesOf(fx.db, subscriptionId);
    expect(receiver.received).toHaveLength(2);
    for (const event of events) {
      const received = receiver.received.find((r) => r.headers['svc-event-id'] === event.id)!;
      const delivery = deliveries.find((d) => d.event_id === event.id)!;
      expect(received.method).toBe('POST');
      expect(received.url).toBe('/hooks');
      expect(received.body.toString('utf8')).toBe(event.payload);
      expect(received.headerNames.filter((name) => !['Host', 'Connection', 'content-length'].includes(name)).sort()).toEqual(
        ['content-type', 'user-agent', 'Svc-Signature', 'Svc-Timestamp', 'Svc-Event-Id', 'Svc-Event-Type', 'Svc-Delivery-Id', 'Svc-Subscription-Id'].sort(),
      );
      expect(received.headers).toMatchObject({
        'content-type': 'application/json',
        'user-agent': DEFAULT_WEBHOOK_USER_AGENT,
        'svc-timestamp': String(Math.floor(fx.clock.now() / 1000)),
        'svc-event-id': event.id,
        'svc-event-type': event.type,
        'svc-delivery-id': delivery.id,
        'svc-subscription-id': subscriptionId,
        'content-length': String(Buffer.byteLength(event.payload)),
      });
      expect(header(received.headers['svc-signature'])).toMatch(new RegExp(`^t=${Math.floor(fx.clock.now() / 1000)},v1=[0-9a-f]{64}$`));

      const envelope = verifyWebhook(received.body, received.headers, secret, { now: fx.clock.now });
      expect(envelope.id).toBe(event.id);
      const stripeEvent = Stripe.webhooks.constructEvent(received.body, header(received.headers['svc-signature']), secret, 300, undefined, fx.clock.now()) as unknown as {
        id: string;
      };
      expect(stripeEvent.id).toBe(event.id);
      expect(validateEnvelope(event.type, JSON.parse(received.body.toString('utf8')))).toBeNull();
      expect(headerProblems(event.type, received.headers)).toEqual([]);

      expect(delivery).toMatchObject({ status: 'SUCCEEDED', attempt_count: 1, next_attempt_at: null, completed_at: fx.clock.now(), lease_owner: null });
      expect(attemptsOf(fx.db, delivery.id)).toMatchObject([{ number: 1, status_code: 204, error_code: null, succeeded: 1, next_attempt_at: null }]);
    }
    expect(await deliverDue()).toBe(0);
    expect(receiver.received).toHaveLength(2);
  });

  it('counts any 2xx as success and reads at most 64 KiB of a large answer', async () => {
    await setUp();
    const { id } = subscribe({ eventTypes: ['task.created'] });
    receiver.answer = () => ({ status: 200, body: 'x'.repeat(1024 * 1024) });
    await fx.createTask();
    receiver.answer = () => ({ status: 299 });
    await fx.createTask();
    await deliverDue();
    expect(deliveriesOf(fx.db, id).map((d) => d.status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);

    // The 1 MiB answer again, straight through the sender: it stops reading at 64 KiB (plus at
    // most the chunk that crossed the limit) and hangs up.
    receiver.answer = () => ({ status: 200, body: 'x'.repeat(1024 * 1024) });
    let bytesRead: number | undefined;
    const response = await sendDeliveryRequest({
      url: new URL(receiver.url),
      addresses: [{ address: '127.0.0.1', family: 4 }],
      headers: {},
      body: Buffer.from('{}'),
      onBodyDone: (bytes) => (bytesRead = bytes),
    });
    expect(response.statusCode).toBe(200);
    await waitFor(() => bytesRead !== undefined, 'the body to be dropped');
    expect(bytesRead).toBeGreaterThanOrEqual(MAX_RESPONSE_BYTES);
    expect(bytesRead).toBeLessThan(2 * MAX_RESPONSE_BYTES);
  });

  it('connects only to the checked address, with the URL host as Host', async () => {
    await setUp();
    // A receiver on 127.0.0.2 only: the system resolver's answer for localhost (127.0.0.1 or ::1) would miss it.
    const hosts: string[] = [];
    const server = createHttpServer((req, res) => {
      hosts.push(req.headers.host ?? '');
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    const port = (server.address() as AddressInfo).port;
    const { id } = subscribe({ url: `http://localhost:${port}/in`, eventTypes: ['task.created'] });
    const lookups: string[] = [];
    const lookup: LookupAll = async (hostname) => {
      lookups.push(hostname);
      return [{ address: '127.0.0.2', family: 4 }];
    };
    await fx.createTask();
    await deliverDue(worker({ lookup }));
    expect(lookups).toEqual(['localhost']);
    expect(hosts).toEqual([`localhost:${port}`]);
    expect(deliveriesOf(fx.db, id)[0]!.status).toBe('SUCCEEDED');
  });
});

describe('failures and retries', () => {
  async function oneFailure(answer: Receiver['answer'] | null, options: Partial<DeliveryWorkerOptions> = {}, url?: string) {
    await setUp();
    if (answer) receiver.answer = answer;
    const { id } = subscribe({ eventTypes: ['task.created'], ...(url ? { url } : {}) });
    await fx.createTask();
    await deliverDue(worker(options));
    const [delivery] = deliveriesOf(fx.db, id);
    return { delivery: delivery!, attempts: attemptsOf(fx.db, delivery!.id) };
  }

  it('a 500 is retried after 30 s plus the jitter, signed anew with a fresh t', async () => {
    const { delivery, attempts } = await oneFailure(() => ({ status: 500 }));
    const t0 = fx.clock.now();
    expect(attempts).toMatchObject([{ number: 1, status_code: 500, error_code: null, succeeded: 0, next_attempt_at: t0 + 31_500 }]);
    expect(delivery).toMatchObject({ status: 'PENDING', attempt_count: 1, next_attempt_at: t0 + 31_500 });

    fx.clock.advance(31_499);
    expect(await deliverDue()).toBe(0);
    fx.clock.advance(1);
    receiver.answer = () => ({ status: 204 });
    expect(await deliverDue()).toBe(1);
    const [first, second] = receiver.received;
    expect(second!.headers['svc-delivery-id']).toBe(first!.headers['svc-delivery-id']);
    expect(second!.headers['svc-event-id']).toBe(first!.headers['svc-event-id']);
    expect(Number(second!.headers['svc-timestamp'])).toBe(Number(first!.headers['svc-timestamp']) + 31);
    expect(second!.body.equals(first!.body)).toBe(true);
    expect(attemptsOf(fx.db, delivery.id).map((a) => a.status_code)).toEqual([500, 204]);
  });

  it('a receiver that never answers is a timeout', async () => {
    const { attempts } = await oneFailure(() => 'hang', { timeoutMs: 150 });
    expect(attempts).toMatchObject([{ status_code: null, error_code: 'timeout', succeeded: 0 }]);
    expect(attempts[0]!.duration_ms).toBeGreaterThanOrEqual(140);
    expect(attempts[0]!.duration_ms).toBeLessThan(2000);
  });

  it('a refused connection and a dropped one are connection-failed', async () => {
    const refused = await oneFailure(null, {}, `http://127.0.0.1:${await closedPort()}/hooks`);
    expect(refused.attempts).toMatchObject([{ status_code: null, error_code: 'connection-failed' }]);
    expect(refused.attempts[0]!.error_message).toContain('ECONNREFUSED');
    await receiver.close();
    fx.cleanup();
    const dropped = await oneFailure(() => 'reset');
    expect(dropped.attempts).toMatchObject([{ status_code: null, error_code: 'connection-failed' }]);
  });

  it('a 302 is not followed: one request, and the attempt failed with status 302', async () => {
    const { delivery, attempts } = await oneFailure((d) => (d.url === '/hooks' ? { status: 302, headers: { location: '/elsewhere' } } : { status: 204 }));
    expect(receiver.received.map((r) => r.url)).toEqual(['/hooks']);
    expect(attempts).toMatchObject([{ status_code: 302, succeeded: 0 }]);
    expect(delivery.status).toBe('PENDING');
  });

  it('Retry-After on 429 and 503 postpones the next attempt (seconds or HTTP date), never past the last delay', async () => {
    await setUp();
    const { id } = subscribe({ eventTypes: ['task.created'] });
    const t0 = fx.clock.now();
    const answers = [
      { status: 429, headers: { 'retry-after': '600' } },
      { status: 503, headers: { 'retry-after': new Date(t0 + 2 * 3600_000).toUTCString() } },
      { status: 429, headers: { 'retry-after': String(30 * 86400) } },
      { status: 429, headers: { 'retry-after': '1' } },
      { status: 500, headers: { 'retry-after': '7200' } },
    ];
    const titles = answers.map((_, index) => `t${index}`);
    receiver.answer = (d) => answers[titles.indexOf(JSON.parse(d.body.toString()).data.object.title)]!;
    for (const title of titles) await fx.createTask(title);
    await deliverDue();
    const next = deliveriesOf(fx.db, id).map((d) => d.next_attempt_at! - t0);
    expect(next).toEqual([600_000, 2 * 3600_000, 86_400_000, 31_500, 31_500]);
  });

  it('a 410 disables the subscription (GONE) and cancels its pending deliveries', async () => {
    await setUp();
    const { id } = subscribe({ eventTypes: ['task.created'] });
    receiver.answer = (d) => (JSON.parse(d.body.toString()).data.object.title === 'gone' ? { status: 410 } : { status: 500 });
    await fx.createTask('failing first');
    await deliverDue();
    await fx.createTask('gone');
    fx.clock.advance(1000);
    await deliverDue();
    const row = subscriptionRow(fx.db, id);
    expect(row).toMatchObject({ status: 'DISABLED', disabled_code: 'GONE', version: 2 });
    expect(row.disabled_message).toMatch(/410 Gone/);
    expect(deliveriesOf(fx.db, id).map((d) => d.status)).toEqual(['CANCELLED', 'FAILED']);
    expect(logLines.some((line) => line.includes('webhook subscription disabled') && line.includes('GONE'))).toBe(true);
    // Nothing more is sent, and a new event finds no ACTIVE subscription.
    fx.clock.advance(3600_000);
    await fx.createTask('after');
    expect(await deliverDue()).toBe(0);
    expect(receiver.received).toHaveLength(2);
  });

  it('walks the whole default schedule with the injected clock: 30 s … 24 h, jitter bounded and deterministic, then FAILED', async () => {
    await setUp();
    const { id } = subscribe({ eventTypes: ['task.created'] });
    receiver.answer = () => ({ status: 500 });
    const randoms = [0, 0.25, 0.5, 0.75, 0.999, 0.1, 0.3];
    let draws = 0;
    const w = worker({ random: () => randoms[draws++ % randoms.length]! });
    await fx.createTask();
    const [delivery] = deliveriesOf(fx.db, id);
    for (let attempt = 1; attempt <= 8; attempt += 1) {
      const due = deliveriesOf(fx.db, id)[0]!.next_attempt_at!;
      fx.clock.set(due - 1);
      expect(await deliverDue(w), `nothing before attempt ${attempt} is due`).toBe(0);
      fx.clock.set(due);
      expect(await deliverDue(w)).toBe(1);
    }
    const attempts = attemptsOf(fx.db, delivery!.id);
    expect(attempts).toHaveLength(8);
    const gaps = attempts.slice(1).map((a, index) => a.attempted_at - attempts[index]!.attempted_at);
    expect(gaps).toEqual(planDefaultRetryDelays.map((seconds, index) => Math.round(seconds * 1000 * (1 + 0.1 * randoms[index]!))));
    gaps.forEach((gap, index) => {
      expect(gap).toBeGreaterThanOrEqual(planDefaultRetryDelays[index]! * 1000);
      expect(gap).toBeLessThanOrEqual(planDefaultRetryDelays[index]! * 1100);
    });
    expect(attempts[7]!.next_attempt_at).toBeNull();
    expect(deliveriesOf(fx.db, id)[0]).toMatchObject({ status: 'FAILED', attempt_count: 8, next_attempt_at: null, completed_at: fx.clock.now() });
    expect(subscriptionRow(fx.db, id)).toMatchObject({ status: 'ACTIVE', consecutive_failed_events: 1 });
    // About 35 hours in all.
    expect((attempts[7]!.attempted_at - attempts[0]!.attempted_at) / 3600_000).toBeGreaterThan(35);
    expect(receiver.received).toHaveLength(8);
  });

  it('follows the workspace schedule in force', async () => {
    await setUp();
    await createWorkspaceStore(fx.db).setWorkspaceLimits(fx.workspace.workspaceId, { webhookRetryDelaysSeconds: [5, 60] });
    const { id } = subscribe({ eventTypes: ['task.created'] });
    receiver.answer = () => ({ status: 503 });
    await fx.createTask();
    const w = worker({ random: () => 0 });
    const t0 = fx.clock.now();
    await deliverDue(w);
    expect(deliveriesOf(fx.db, id)[0]!.next_attempt_at).toBe(t0 + 5000);
    fx.clock.set(t0 + 5000);
    await deliverDue(w);
    expect(deliveriesOf(fx.db, id)[0]!.next_attempt_at).toBe(t0 + 65_000);
    fx.clock.set(t0 + 65_000);
    await deliverDue(w);
    expect(deliveriesOf(fx.db, id)[0]).toMatchObject({ status: 'FAILED', attempt_count: 3 });
  });

  it('3 events in a row failing for the whole schedule disable the subscription (FAILING); a success in between resets the count', async () => {
    await setUp();
    await createWorkspaceStore(fx.db).setWorkspaceLimits(fx.workspace.workspaceId, { webhookRetryDelaysSeconds: [1] });
    const { id } = subscribe({ eventTypes: ['task.created'] });
    const w = worker({ random: () => 0 });
    const deliverOne = async (status: number) => {
      receiver.answer = () => ({ status });
      await fx.createTask();
      await deliverDue(w);
      fx.clock.advance(1000);
      await deliverDue(w);
    };
    await deliverOne(500);
    await deliverOne(500);
    expect(subscriptionRow(fx.db, id).consecutive_failed_events).toBe(2);
    await deliverOne(200);
    expect(subscriptionRow(fx.db, id)).toMatchObject({ status: 'ACTIVE', consecutive_failed_events: 0 });
    await deliverOne(500);
    await deliverOne(500);
    // The third failing event; meanwhile another event's delivery waits, not yet due.
    receiver.answer = () => ({ status: 500 });
    await fx.createTask('third');
    await deliverDue(w);
    const t = fx.clock.now();
    fx.clock.set(t + 10_000);
    await fx.createTask('waiting');
    fx.clock.set(t + 1000);
    await deliverDue(w);
    const row = subscriptionRow(fx.db, id);
    expect(row).toMatchObject({ status: 'DISABLED', disabled_code: 'FAILING', consecutive_failed_events: 3, version: 2 });
    expect(row.disabled_message).toMatch(/3 events in a row failed/);
    expect(deliveriesOf(fx.db, id).map((d) => d.status)).toEqual(['FAILED', 'FAILED', 'SUCCEEDED', 'FAILED', 'FAILED', 'FAILED', 'CANCELLED']);
    expect(deliveriesOf(fx.db, id).filter((d) => d.status === 'PENDING')).toEqual([]);
  });
});

describe('replays and the FAILING rule', () => {
  it('replays failing for the whole schedule are not counted; a replay that succeeds resets the count', async () => {
    await setUp();
    await createWorkspaceStore(fx.db).setWorkspaceLimits(fx.workspace.workspaceId, { webhookRetryDelaysSeconds: [1] });
    const { id } = subscribe({ eventTypes: ['task.created'] });
    const subscriptions = createWebhookSubscriptions(fx.db, { secretBox: testSecretBox, allowLoopback: true, now: fx.clock.now, resolver: false });
    const w = worker({ random: () => 0 });
    const runSchedule = async () => {
      await deliverDue(w);
      fx.clock.advance(1000);
      await deliverDue(w);
    };
    receiver.answer = () => ({ status: 500 });
    await fx.createTask();
    await runSchedule();
    expect(subscriptionRow(fx.db, id).consecutive_failed_events).toBe(1);
    const eventId = deliveriesOf(fx.db, id)[0]!.event_id;
    for (let replay = 0; replay < 3; replay += 1) {
      await subscriptions.replayWebhookEvents(fx.workspace.workspaceId, id, { eventId });
      await runSchedule();
    }
    expect(deliveriesOf(fx.db, id).map((d) => [d.status, d.replay])).toEqual([['FAILED', 0], ['FAILED', 1], ['FAILED', 1], ['FAILED', 1]]);
    expect(subscriptionRow(fx.db, id)).toMatchObject({ status: 'ACTIVE', consecutive_failed_events: 1 });

    receiver.answer = () => ({ status: 204 });
    await subscriptions.replayWebhookEvents(fx.workspace.workspaceId, id, { eventId });
    await runSchedule();
    expect(subscriptionRow(fx.db, id)).toMatchObject({ status: 'ACTIVE', consecutive_failed_events: 0 });
  });
});

describe('target checks at delivery', () => {
  it('refuses a name resolving to a private address (forbidden-address) without connecting', async () => {
    await setUp();
    const lookups: string[] = [];
    const lookup: LookupAll = async (hostname) => {
      lookups.push(hostname);
      return [{ address: '10.1.2.3', family: 4 }];
    };
    const { id } = subscribe({ url: 'https://hooks.example.com/in', eventTypes: ['task.created'] });
    await fx.createTask();
    await deliverDue(worker({ lookup, allowLoopback: false }));
    expect(lookups).toEqual(['hooks.example.com']);
    const [attempt] = attemptsOf(fx.db, deliveriesOf(fx.db, id)[0]!.id);
    expect(attempt).toMatchObject({ status_code: null, error_code: 'forbidden-address', succeeded: 0 });
    // The delivery log (the tenant's view) does not show where the name resolves; the server log does.
    expect(attempt!.error_message).toBe(TARGET_NOT_PUBLIC_MESSAGE);
    expect(attempt!.error_message).not.toContain('10.1.2.3');
    expect(attempt!.error_message).not.toContain('private');
    const logged = logLines.find((line) => line.includes('webhook target refused'))!;
    expect(logged).toContain('10.1.2.3 (private)');
  });

  it('a loopback URL is refused once loopback is no longer allowed, and a name that does not resolve is dns-failure', async () => {
    await setUp();
    const loopback = subscribe({ eventTypes: ['task.created'] });
    const unresolvable = subscribe({ url: 'https://nowhere.invalid/in', eventTypes: ['task.created'] });
    const lookup: LookupAll = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.invalid'), { code: 'ENOTFOUND' });
    };
    await fx.createTask();
    await deliverDue(worker({ lookup, allowLoopback: false }));
    expect(attemptsOf(fx.db, deliveriesOf(fx.db, loopback.id)[0]!.id)).toMatchObject([{ error_code: 'forbidden-address' }]);
    expect(attemptsOf(fx.db, deliveriesOf(fx.db, unresolvable.id)[0]!.id)).toMatchObject([{ error_code: 'dns-failure', error_message: TARGET_UNRESOLVABLE_MESSAGE }]);
    expect(logLines.some((line) => line.includes('webhook target refused') && line.includes('ENOTFOUND'))).toBe(true);
    expect(receiver.received).toEqual([]);
  });
});

describe('slow names', () => {
  it('a name that never answers holds no slot: the deliveries to other targets go out meanwhile, and the name is asked once', async () => {
    await setUp();
    const dns = fakeDnsResolver({ 'stuck.example.com': 'never', localhost: ['127.0.0.1'] });
    const resolver = createHostResolver({ resolver: dns, now: fx.clock.now, queryTimeoutMs: 60_000 });
    const stuck = subscribe({ url: 'https://stuck.example.com/in', eventTypes: ['task.created'] });
    const answering = subscribe({ url: receiver.url.replace('127.0.0.1', 'localhost'), eventTypes: ['task.created'] });
    for (let index = 0; index < 10; index += 1) await fx.createTask(`Task ${index}`);
    // Two slots, and every event has a delivery to the stuck name claimed beside the other one.
    // The budget is spent in real time (the end of the test waits it out): long enough for ten local deliveries on a busy machine.
    const w = worker({ resolver, concurrency: 2, timeoutMs: 3_000 });
    const started = performance.now();
    await w.start();
    await waitFor(() => deliveriesOf(fx.db, answering.id).every((delivery) => delivery.status === 'SUCCEEDED'), 'the deliveries to the name that answers', 2_900);
    // Before the first attempt to the stuck name has spent its budget: nothing waited for it.
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(receiver.received).toHaveLength(10);
    expect(deliveriesOf(fx.db, stuck.id).map((delivery) => delivery.attempt_count)).toEqual(Array(10).fill(0));
    expect(dns.asked.filter((query) => query.endsWith(' stuck.example.com'))).toEqual(['A stuck.example.com', 'AAAA stuck.example.com']);

    await w.idle();
    await w.stop();
    for (const delivery of deliveriesOf(fx.db, stuck.id)) {
      expect(attemptsOf(fx.db, delivery.id)).toMatchObject([{ error_code: 'timeout', status_code: null }]);
    }
  });

  it('a target that never answers holds at most maxPerTarget slots: the deliveries to another target all go out meanwhile, none lost or sent twice', async () => {
    await setUp();
    const slow = await startReceiver();
    slow.answer = () => 'hang';
    cleanups.push(() => slow.close());
    // The slow target's deliveries are due first: without a cap they would take every slot.
    const stalled = subscribe({ url: slow.url, eventTypes: ['task.created'] });
    for (let index = 0; index < 8; index += 1) await fx.createTask(`Slow ${index}`);
    fx.clock.advance(1_000);
    const answering = subscribe({ eventTypes: ['task.completed'] });
    for (let index = 0; index < 8; index += 1) await fx.completeTask(await fx.createTask(`Fast ${index}`));
    fx.clock.advance(1_000);
    // Four slots: at most 2 to any one target; the attempts to the slow target would wait 20 s.
    const w = worker({ concurrency: 4, timeoutMs: 20_000 });
    await w.start();
    await waitFor(() => deliveriesOf(fx.db, answering.id).every((delivery) => delivery.status === 'SUCCEEDED'), 'the deliveries to the target that answers', 4_000);
    expect(receiver.received).toHaveLength(8);
    // Two requests reached the slow target and are held there; two more of its deliveries (in the
    // first claim) wait aside, claimed, unsent; the others (the fast tasks were created too) were
    // left due: claims skip a subscription whose target is at its cap.
    expect(slow.received).toHaveLength(2);
    const slowDeliveries = deliveriesOf(fx.db, stalled.id);
    expect(slowDeliveries).toHaveLength(16);
    expect(slowDeliveries.map((delivery) => delivery.attempt_count)).toEqual(Array(16).fill(0));
    expect(slowDeliveries.filter((delivery) => delivery.lease_owner?.startsWith('wkr_test.'))).toHaveLength(4);

    // The slow target goes away: the two held requests fail, and those waiting aside are then attempted, one each.
    await slow.close();
    await w.idle();
    await w.stop();
    for (const delivery of deliveriesOf(fx.db, stalled.id)) {
      expect(attemptsOf(fx.db, delivery.id)).toMatchObject([{ error_code: 'connection-failed', status_code: null }]);
    }
    const sentIds = receiver.received.map((r) => header(r.headers['svc-delivery-id']));
    expect(new Set(sentIds).size).toBe(8);
    expect(deliveriesOf(fx.db, answering.id).every((delivery) => delivery.attempt_count === 1)).toBe(true);
  });

  it('one answering target may hold all slots but a quarter; once an attempt to it sends for longer than SLOW_TARGET_MS it holds at most maxPerTarget', async () => {
    await setUp();
    const { id } = subscribe({ eventTypes: ['task.created'] });
    for (let index = 0; index < 12; index += 1) await fx.createTask(`Task ${index}`);
    // Eight slots: a slow target holds at most 2 (a quarter), any other at most 6 (all but a quarter).
    receiver.answer = () => ({ status: 204, delayMs: 100 });
    const w = worker({ concurrency: 8, timeoutMs: 20_000 });
    await w.start();
    await waitFor(() => receiver.received.length === 6, 'six requests at once to one target');
    // The six answer after SLOW_TARGET_MS by the worker's clock: the target is slow from then on.
    fx.clock.advance(SLOW_TARGET_MS + 1);
    receiver.answer = () => 'hang';
    await waitFor(() => deliveriesOf(fx.db, id).filter((delivery) => delivery.status === 'SUCCEEDED').length === 6, 'the six recorded');
    await waitFor(() => receiver.received.length === 8, 'two more requests, the slow cap');
    // Nothing marks "no more requests"; the worker had 300 ms of real time to send a ninth and sent none.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received).toHaveLength(8);
    await receiver.close();
    await w.idle();
  });

  it('counts targets by scheme, host and port, the default port written out; the default cap is a quarter of the slots, at least 2', () => {
    expect(targetKey('https://Hooks.Example.com/a?x=1')).toBe('https://hooks.example.com:443');
    expect(targetKey('https://hooks.example.com:443/b')).toBe('https://hooks.example.com:443');
    expect(targetKey('http://hooks.example.com/a')).toBe('http://hooks.example.com:80');
    expect(targetKey('https://hooks.example.com:8443/a')).not.toBe(targetKey('https://hooks.example.com/a'));
    expect(targetKey('not a url')).toBe('(invalid URL)');
    expect([1, 4, 8, 16, 64].map(targetCap)).toEqual([2, 2, 2, 4, 16]);
  });

  it('a delivery to a target at its cap that cannot wait aside (maxHeld) is given up, due again TARGET_BUSY_DEFER_MS later, unattempted', async () => {
    await setUp();
    receiver.answer = () => 'hang';
    const { id } = subscribe({ eventTypes: ['task.created'] });
    for (let index = 0; index < 5; index += 1) await fx.createTask(`Task ${index}`);
    const w = worker({ concurrency: 4, maxPerTarget: 1, maxPerAnyTarget: 1, maxHeld: 1, timeoutMs: 20_000 });
    await w.start();
    const givenUpOf = () => deliveriesOf(fx.db, id).filter((delivery) => delivery.next_attempt_at === fx.clock.now() + TARGET_BUSY_DEFER_MS);
    // The first claim takes four: one sent, one held aside, two given up; the fifth is not claimed (its subscription's target is at its cap).
    await waitFor(() => receiver.received.length === 1 && givenUpOf().length === 2, 'one sent, one held, two given up', 4_000);
    const deliveries = deliveriesOf(fx.db, id);
    expect(deliveries.map((delivery) => delivery.attempt_count)).toEqual(Array(5).fill(0));
    expect(deliveries.filter((delivery) => delivery.lease_owner !== null)).toHaveLength(2);
    expect(givenUpOf().every((delivery) => delivery.status === 'PENDING' && delivery.lease_owner === null && delivery.lease_expires_at === null)).toBe(true);

    // Stopping gives the held one up too, due at once; the one in flight ends (its target goes away) and is recorded.
    await receiver.close();
    await w.stop();
    const after = deliveriesOf(fx.db, id);
    expect(after.filter((delivery) => delivery.attempt_count === 1)).toHaveLength(1);
    expect(after.filter((delivery) => delivery.lease_owner !== null)).toHaveLength(0);
    // The held one and the unclaimed one are due at once; the two given up a second later.
    expect(after.filter((delivery) => delivery.attempt_count === 0 && delivery.next_attempt_at === fx.clock.now())).toHaveLength(2);
    expect(after.filter((delivery) => delivery.attempt_count === 0 && delivery.next_attempt_at === fx.clock.now() + TARGET_BUSY_DEFER_MS)).toHaveLength(2);
  });

  it('a name whose failure is cached fails at once, without asking again', async () => {
    await setUp();
    const dns = fakeDnsResolver({ 'broken.example.com': { code: 'ESERVFAIL' } });
    const resolver = createHostResolver({ resolver: dns, now: fx.clock.now });
    const broken = subscribe({ url: 'https://broken.example.com/in', eventTypes: ['task.created'] });
    for (let index = 0; index < 5; index += 1) await fx.createTask(`Task ${index}`);
    await deliverDue(worker({ resolver }));
    for (const delivery of deliveriesOf(fx.db, broken.id)) {
      expect(attemptsOf(fx.db, delivery.id)).toMatchObject([{ error_code: 'dns-failure', error_message: TARGET_UNRESOLVABLE_MESSAGE }]);
    }
    expect(dns.asked).toEqual(['A broken.example.com', 'AAAA broken.example.com']);
  });
});

describe('TLS', () => {
  let key: Buffer;
  let cert: Buffer;
  beforeAll(() => {
    ({ key, cert } = selfSignedCertificate('hooks.test'));
  });

  it('an https URL whose server does not speak TLS is tls-failure', async () => {
    await setUp();
    const { id } = subscribe({ url: `https://127.0.0.1:${receiver.port}/hooks`, eventTypes: ['task.created'] });
    await fx.createTask();
    await deliverDue();
    expect(attemptsOf(fx.db, deliveriesOf(fx.db, id)[0]!.id)).toMatchObject([{ status_code: null, error_code: 'tls-failure' }]);
  });

  it('sends the URL host as SNI and checks the certificate against it while connecting to the checked address', async () => {
    await setUp();
    const serverNames: string[] = [];
    const server = createHttpsServer(
      {
        key,
        cert,
        SNICallback: (name, callback) => {
          serverNames.push(name);
          callback(null, undefined);
        },
      },
      (req, res) => {
        req.resume();
        req.on('end', () => res.writeHead(204).end());
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    const port = (server.address() as AddressInfo).port;
    const lookup: LookupAll = async () => [{ address: '127.0.0.1', family: 4 }];
    const good = subscribe({ url: `https://hooks.test:${port}/in`, eventTypes: ['task.created'] });
    const wrongName = subscribe({ url: `https://other.test:${port}/in`, eventTypes: ['task.created'] });
    await fx.createTask();
    await deliverDue(worker({ lookup, ca: cert }));
    expect(deliveriesOf(fx.db, good.id)[0]!.status).toBe('SUCCEEDED');
    const [mismatch] = attemptsOf(fx.db, deliveriesOf(fx.db, wrongName.id)[0]!.id);
    expect(mismatch).toMatchObject({ error_code: 'tls-failure' });
    expect(serverNames).toContain('hooks.test');
    expect(serverNames).toContain('other.test');
  });
});

describe('rotation overlap', () => {
  it('signs with both secrets (current first) while the overlap lasts, with the current one alone after it', async () => {
    await setUp();
    const previous = 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA';
    const expiresAt = fx.clock.now() + (58 * 60 + 45) * 60_000;
    const { secret } = subscribe({ eventTypes: ['task.created'], previous: { secret: previous, expiresAt } });
    await fx.createTask('during');
    await deliverDue();
    const during = receiver.received[0]!;
    const duringHeader = header(during.headers['svc-signature']);
    expect(headerProblems('task.created', during.headers)).toEqual([]);
    expect(duringHeader).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    for (const key of [secret, previous]) {
      expect(verifyWebhook(during.body, during.headers, key, { now: fx.clock.now }).type).toBe('task.created');
      expect(Stripe.webhooks.signature!.verifyHeader(during.body.toString(), duringHeader, key, 300, undefined, fx.clock.now())).toBe(true);
    }
    // Current first: the first v1 is the current secret's.
    const onlyCurrent = verifyWebhook(during.body, { 'svc-signature': duringHeader.split(',').slice(0, 2).join(',') }, secret, { now: fx.clock.now });
    expect(onlyCurrent.id).toBe(during.headers['svc-event-id']);

    fx.clock.set(expiresAt);
    await fx.createTask('after');
    await deliverDue();
    const after = receiver.received[1]!;
    expect(header(after.headers['svc-signature'])).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyWebhook(after.body, after.headers, secret, { now: fx.clock.now }).type).toBe('task.created');
    expect(() => verifyWebhook(after.body, after.headers, previous, { now: fx.clock.now })).toThrow(/no v1 signature matches/);
    expect(() => Stripe.webhooks.constructEvent(after.body, header(after.headers['svc-signature']), previous, 300, undefined, fx.clock.now())).toThrow();
  });
});

describe('workers sharing one database', () => {
  it('two workers on two connections deliver N events with every attempt sent exactly once', async () => {
    await setUp();
    const { id } = subscribe({ eventTypes: ['task.created'] });
    receiver.answer = () => ({ status: 204 });
    const N = 60;
    for (let index = 0; index < N; index += 1) await fx.createTask();
    const otherDb = openDatabase(fx.path);
    cleanups.push(() => otherDb.close());
    const a = worker({ workerId: 'wkr_a', concurrency: 4 });
    const b = worker({ workerId: 'wkr_b', concurrency: 4, db: otherDb });
    const delivered = await deliverDueTogether([a, b]);
    const deliveredBy = (workerId: string) => logLines.filter((line) => line.includes('webhook delivered') && line.includes(`"workerId":"${workerId}"`)).length;
    const [byA, byB] = [deliveredBy('wkr_a'), deliveredBy('wkr_b')];
    expect(delivered).toBe(N);
    expect(byA + byB).toBe(N);
    expect(byA).toBeGreaterThan(0);
    expect(byB).toBeGreaterThan(0);
    const perDelivery = new Map<string, number>();
    for (const r of receiver.received) perDelivery.set(header(r.headers['svc-delivery-id']), (perDelivery.get(header(r.headers['svc-delivery-id'])) ?? 0) + 1);
    expect(perDelivery.size).toBe(N);
    expect([...perDelivery.values()].every((count) => count === 1)).toBe(true);
    expect(deliveriesOf(fx.db, id).every((d) => d.status === 'SUCCEEDED' && d.attempt_count === 1)).toBe(true);
  });

  it("takes over a dead worker's claim once its 60-second lease has expired", async () => {
    await setUp();
    const { id } = subscribe({ eventTypes: ['task.created'] });
    await fx.createTask();
    // A worker that claims and dies before sending.
    const dead = createWebhookDeliveryStore(openDatabase(fx.path), { now: fx.clock.now });
    expect(await dead.claimDue('wkr_dead', 10)).toHaveLength(1);
    const alive = worker({ workerId: 'wkr_alive' });
    expect(await deliverDue(alive)).toBe(0);
    fx.clock.advance(DELIVERY_LEASE_MS);
    expect(await deliverDue(alive)).toBe(1);
    expect(deliveriesOf(fx.db, id)[0]).toMatchObject({ status: 'SUCCEEDED', attempt_count: 1 });
    expect(receiver.received).toHaveLength(1);
  });

  it('an attempt held up past its lease is not sent once another worker has taken the delivery over', async () => {
    await setUp();
    const { id } = subscribe({ url: receiver.url.replace('127.0.0.1', 'localhost'), eventTypes: ['task.created'] });
    await fx.createTask();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const lookups: string[] = [];
    const held: LookupAll = async (hostname) => {
      lookups.push(hostname);
      await gate;
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const fast: LookupAll = async () => [{ address: '127.0.0.1', family: 4 }];
    const otherDb = openDatabase(fx.path);
    cleanups.push(() => otherDb.close());
    // Both with the same worker id: only the per-claim token tells their claims apart.
    const a = worker({ lookup: held, workerId: 'wkr_same' });
    const b = worker({ lookup: fast, workerId: 'wkr_same', db: otherDb });

    await a.start();
    await waitFor(() => lookups.length === 1, "A's lookup");
    fx.clock.advance(DELIVERY_LEASE_MS + 1000);
    expect(await deliverDue(b)).toBe(1);
    release();
    await a.idle();

    const perDelivery = receiver.received.map((r) => header(r.headers['svc-delivery-id']));
    expect(perDelivery).toEqual([deliveriesOf(fx.db, id)[0]!.id]);
    const [delivery] = deliveriesOf(fx.db, id);
    expect(delivery).toMatchObject({ status: 'SUCCEEDED', attempt_count: 1 });
    expect(attemptsOf(fx.db, delivery!.id)).toHaveLength(1);
    expect(logLines.some((line) => line.includes('webhook attempt not sent'))).toBe(true);
  });

  it('sends only while the attempt can still end LEASE_MARGIN_MS before its lease does', async () => {
    await setUp();
    const { id } = subscribe({ url: receiver.url.replace('127.0.0.1', 'localhost'), eventTypes: ['task.created'] });
    await fx.createTask();
    // The lookup moves the clock to `lateBy` ms after the last moment a 10-second attempt may start.
    const attemptAfterLookup = async (lateBy: number) => {
      const claimedAt = fx.clock.now();
      const lookup: LookupAll = async () => {
        fx.clock.set(claimedAt + DELIVERY_LEASE_MS - 10_000 - LEASE_MARGIN_MS + lateBy);
        return [{ address: '127.0.0.1', family: 4 }];
      };
      await deliverDue(worker({ lookup, timeoutMs: 10_000 }));
    };
    await attemptAfterLookup(1);
    expect(receiver.received).toEqual([]);
    expect(deliveriesOf(fx.db, id)[0]).toMatchObject({ status: 'PENDING', attempt_count: 0 });
    fx.clock.advance(DELIVERY_LEASE_MS);
    await attemptAfterLookup(0);
    expect(receiver.received).toHaveLength(1);
    expect(deliveriesOf(fx.db, id)[0]).toMatchObject({ status: 'SUCCEEDED', attempt_count: 1 });
  });

  it('gives the lookup and the request one time budget: a lookup that never answers ends the attempt as a timeout', async () => {
    await setUp();
    const { id } = subscribe({ url: receiver.url.replace('127.0.0.1', 'localhost'), eventTypes: ['task.created'] });
    await fx.createTask();
    const never: LookupAll = () => new Promise(() => {});
    const started = performance.now();
    await deliverDue(worker({ lookup: never, timeoutMs: 200 }));
    expect(performance.now() - started).toBeLessThan(2000);
    const [attempt] = attemptsOf(fx.db, deliveriesOf(fx.db, id)[0]!.id);
    expect(attempt).toMatchObject({ status_code: null, error_code: 'timeout', succeeded: 0 });
    expect(attempt!.error_message).toMatch(/^no status within 200 ms/);
    expect(receiver.received).toEqual([]);
  });

  it('a slow lookup leaves the request only what is left of the budget', async () => {
    await setUp();
    const { id } = subscribe({ url: receiver.url.replace('127.0.0.1', 'localhost'), eventTypes: ['task.created'] });
    await fx.createTask();
    const slow: LookupAll = async () => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return [{ address: '127.0.0.1', family: 4 }];
    };
    // 300 ms of lookup + 300 ms of answer: within 500 ms for each alone, not for both.
    receiver.answer = () => ({ status: 204, delayMs: 300 });
    await deliverDue(worker({ lookup: slow, timeoutMs: 500 }));
    expect(receiver.received).toHaveLength(1);
    expect(attemptsOf(fx.db, deliveriesOf(fx.db, id)[0]!.id)).toMatchObject([{ error_code: 'timeout', error_message: 'no status within 500 ms' }]);
  });
});

describe('recording attempts in batches', () => {
  it('an attempt whose record fails stays claimed and is sent again after its lease; the others of its batch are recorded', async () => {
    await setUp();
    const { id } = subscribe({ eventTypes: ['task.created'] });
    for (let index = 0; index < 3; index += 1) await fx.createTask();
    const failing = deliveriesOf(fx.db, id)[1]!.id;
    fx.db
      .prepare(`CREATE TEMP TRIGGER fail_attempt BEFORE INSERT ON webhook_attempts WHEN NEW.delivery_id = '${failing}' BEGIN SELECT RAISE(ABORT, 'injected failure'); END`)
      .run();
    expect(await deliverDue()).toBe(3);
    expect(receiver.received).toHaveLength(3);
    expect(deliveriesOf(fx.db, id).map((d) => [d.status, d.attempt_count])).toEqual([
      ['SUCCEEDED', 1],
      ['PENDING', 0],
      ['SUCCEEDED', 1],
    ]);
    expect(attemptsOf(fx.db, failing)).toEqual([]);
    expect(logLines.filter((line) => line.includes('webhook attempt not recorded') && line.includes(failing))).toHaveLength(1);

    fx.db.prepare('DROP TRIGGER fail_attempt').run();
    expect(await deliverDue()).toBe(0);
    fx.clock.advance(DELIVERY_LEASE_MS);
    expect(await deliverDue()).toBe(1);
    expect(receiver.received.filter((r) => r.headers['svc-delivery-id'] === failing)).toHaveLength(2);
    expect(deliveriesOf(fx.db, id)[1]).toMatchObject({ status: 'SUCCEEDED', attempt_count: 1 });
    expect(attemptsOf(fx.db, failing)).toMatchObject([{ number: 1, status_code: 204, succeeded: 1 }]);
  });

  /** One task.created delivery due, this worker's connection waiting for no lock, and another connection to take the write lock with. */
  async function oneDeliveryAndAnotherConnection() {
    await setUp();
    const { id } = subscribe({ eventTypes: ['task.created'] });
    await fx.createTask();
    fx.db.pragma('busy_timeout = 0');
    const other = openDatabase(fx.path);
    cleanups.push(() => other.close());
    return { id, other };
  }

  it('a 2xx whose recording finds the write lock held for a moment is recorded once it is free: no second send', async () => {
    const { id, other } = await oneDeliveryAndAnotherConnection();
    // Another process holds the write lock as the answer arrives and lets it go while the recording tries again.
    receiver.answer = () => {
      other.prepare('BEGIN IMMEDIATE').run();
      setTimeout(() => other.prepare('ROLLBACK').run(), 40);
      return { status: 204 };
    };
    await deliverDue();
    expect(receiver.received).toHaveLength(1);
    const [delivery] = deliveriesOf(fx.db, id);
    expect(delivery).toMatchObject({ status: 'SUCCEEDED', attempt_count: 1 });
    expect(attemptsOf(fx.db, delivery!.id)).toMatchObject([{ number: 1, status_code: 204, succeeded: 1 }]);
    expect(logLines.some((line) => line.includes('webhook attempt not recorded'))).toBe(false);
  });

  it('a 2xx that cannot be recorded (the write lock is held elsewhere) is no success: the delivery is sent again after its lease', async () => {
    const { id, other } = await oneDeliveryAndAnotherConnection();
    // The write lock is taken while the request is at the receiver: after the claim, before the record.
    receiver.answer = () => {
      if (!other.inTransaction) other.prepare('BEGIN IMMEDIATE').run();
      return { status: 204 };
    };
    await deliverDue();
    expect(receiver.received).toHaveLength(1);
    other.prepare('ROLLBACK').run();
    const [delivery] = deliveriesOf(fx.db, id);
    expect(delivery).toMatchObject({ status: 'PENDING', attempt_count: 0, lease_owner: expect.stringMatching(/^wkr_test\./) });
    expect(attemptsOf(fx.db, delivery!.id)).toEqual([]);
    expect(logLines.some((line) => line.includes('webhook attempt not recorded') && line.includes('HTTP 204'))).toBe(true);

    receiver.answer = () => ({ status: 204 });
    fx.clock.advance(DELIVERY_LEASE_MS);
    expect(await deliverDue()).toBe(1);
    expect(receiver.received.map((r) => r.headers['svc-event-id'])).toEqual([delivery!.event_id, delivery!.event_id]);
    expect(deliveriesOf(fx.db, id)[0]).toMatchObject({ status: 'SUCCEEDED', attempt_count: 1 });
    expect(attemptsOf(fx.db, delivery!.id)).toMatchObject([{ number: 1, status_code: 204, succeeded: 1 }]);
  });
});

describe('connections', () => {
  /** A receiver that counts connections and requests; `requestOnConnection` is 1 for a connection's first request. */
  async function countingServer(handle: (req: IncomingMessage, res: ServerResponse, requestOnConnection: number) => void) {
    const counts = { connections: 0, requests: 0 };
    const server = createHttpServer((req, res) => {
      counts.requests += 1;
      const socket = req.socket as typeof req.socket & { requestsServed?: number };
      socket.requestsServed = (socket.requestsServed ?? 0) + 1;
      req.resume();
      req.on('end', () => handle(req, res, socket.requestsServed!));
    });
    server.on('connection', () => (counts.connections += 1));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    return { counts, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/in` };
  }

  it('keeps the connection to a target alive between attempts', async () => {
    await setUp();
    const target = await countingServer((_req, res) => res.writeHead(204).end());
    const { id } = subscribe({ url: target.url, eventTypes: ['task.created'] });
    for (let index = 0; index < 5; index += 1) await fx.createTask();
    await deliverDue(worker({ concurrency: 1 }));
    expect(target.counts).toEqual({ connections: 1, requests: 5 });
    expect(deliveriesOf(fx.db, id).every((d) => d.status === 'SUCCEEDED')).toBe(true);
  });

  it('sends once more on a new connection when the subscriber drops a kept one as it is reused, within the same attempt', async () => {
    await setUp();
    const target = await countingServer((req, res, requestOnConnection) => {
      if (requestOnConnection === 2) req.socket.destroy();
      else res.writeHead(204).end();
    });
    const { id } = subscribe({ url: target.url, eventTypes: ['task.created'] });
    await fx.createTask();
    await fx.createTask();
    await deliverDue(worker({ concurrency: 1 }));
    expect(target.counts).toEqual({ connections: 2, requests: 3 });
    for (const delivery of deliveriesOf(fx.db, id)) {
      expect(delivery).toMatchObject({ status: 'SUCCEEDED', attempt_count: 1 });
      expect(attemptsOf(fx.db, delivery.id)).toMatchObject([{ number: 1, status_code: 204 }]);
    }
  });

  it('keeps one agent per origin and set of checked addresses', () => {
    const agents = createDeliveryAgents();
    cleanups.push(() => agents.destroy());
    const url = new URL('https://hooks.example.com/in');
    const one = agents.agentFor(url, [
      { address: '203.0.113.5', family: 4 },
      { address: '203.0.113.6', family: 4 },
    ]);
    expect(
      agents.agentFor(new URL('https://hooks.example.com/other?x=1'), [
        { address: '203.0.113.6', family: 4 },
        { address: '203.0.113.5', family: 4 },
      ]),
    ).toBe(one);
    expect(agents.agentFor(url, [{ address: '203.0.113.5', family: 4 }])).not.toBe(one);
    expect(agents.agentFor(new URL('https://hooks.example.com:8443/in'), [{ address: '203.0.113.5', family: 4 }])).not.toBe(one);
  });
});

describe('the running worker', () => {
  it('delivers right after the commit when woken, without waiting for a poll; stop() lets the attempt in flight finish', async () => {
    await setUp();
    const { id } = subscribe({ eventTypes: ['task.created'] });
    const w = worker({ retrySweep: false, timeoutMs: 300 });
    await w.start();
    await fx.createTask();
    await waitFor(() => deliveriesOf(fx.db, id)[0]!.status === 'SUCCEEDED', 'the woken delivery');

    // An attempt is in flight (the receiver does not answer) when stop() is called: stop waits for
    // it to end (here by the timeout) and be recorded, and claims nothing more.
    receiver.answer = () => 'hang';
    await fx.createTask();
    await waitFor(() => receiver.received.length === 2, 'the second request');
    await w.stop();
    const second = deliveriesOf(fx.db, id)[1]!;
    expect(second).toMatchObject({ status: 'PENDING', attempt_count: 1, lease_owner: null });
    expect(attemptsOf(fx.db, second.id)).toMatchObject([{ error_code: 'timeout' }]);
    expect(logLines.some((line) => line.includes('webhook worker stopped'))).toBe(true);
    fx.clock.advance(3600_000);
    await fx.createTask();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(receiver.received).toHaveLength(2);
  });

  it('notices commits of other connections (PRAGMA data_version) without a sweep', async () => {
    await setUp();
    const { id } = subscribe({ eventTypes: ['task.created'] });
    const w = worker({ retrySweep: false, commitPollMs: 5 });
    await w.start();
    const other = openDatabase(fx.path);
    cleanups.push(() => other.close());
    await createTaskStore(other, { now: fx.clock.now }).createTask(fx.workspace.workspaceId, { projectId: fx.projectId, title: 'From elsewhere' }, fx.workspace.actor);
    await waitFor(() => deliveriesOf(fx.db, id)[0]?.status === 'SUCCEEDED', 'the delivery of the other connection');
    expect(receiver.received).toHaveLength(1);
  });

  it('logs no secret, no signature and no URL path or query', async () => {
    await setUp();
    const previous = 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA';
    const { secret } = subscribe({
      url: `${receiver.url}?token=subscriber-private-token`,
      eventTypes: ['task.created'],
      previous: { secret: previous, expiresAt: fx.clock.now() + 3600_000 },
    });
    receiver.answer = () => (receiver.received.length === 1 ? { status: 500 } : { status: 204 });
    await fx.createTask();
    const w = worker();
    await deliverDue(w);
    fx.clock.advance(40_000);
    await deliverDue(w);
    expect(logLines.length).toBeGreaterThanOrEqual(2);
    const signatures = receiver.received.flatMap((r) => header(r.headers['svc-signature']).split(',').filter((part) => part.startsWith('v1=')).map((part) => part.slice(3)));
    expect(signatures.length).toBe(4);
    const log = logLines.join('\n');
    for (const forbidden of [secret, previous, ...signatures, 'subscriber-private-token', '/hooks']) expect(log).not.toContain(forbidden);
    expect(log).toContain('webhook delivered');
  });
});

describe('the signing-secret key', () => {
  it('start() refuses, naming WEBHOOK_SECRET_KEY, when the key cannot open the stored secrets', async () => {
    await setUp();
    subscribe({ eventTypes: ['task.created'] });
    await fx.createTask();
    const wrongKey = worker({ secretBox: createSecretBox(Buffer.alloc(32, 9)), retrySweep: false });
    await expect(wrongKey.start()).rejects.toThrow(/WEBHOOK_SECRET_KEY cannot open the stored webhook signing secrets/);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(fx.db.prepare('SELECT count(*) AS n FROM webhook_deliveries WHERE lease_owner IS NOT NULL').get()).toEqual({ n: 0 });
    await wrongKey.stop();

    const rightKey = worker({ retrySweep: false });
    await rightKey.start();
    await waitFor(() => receiver.received.length === 1, 'the delivery');
  });

  it('opens the sealed secrets for each attempt, none kept between attempts, so a rotated one signs at once', async () => {
    await setUp();
    const opened: string[] = [];
    const countingBox = { seal: testSecretBox.seal, open: (sealed: string, context: string) => (opened.push(context), testSecretBox.open(sealed, context)) };
    const { id, secret } = subscribe({ eventTypes: ['task.created'] });
    for (let index = 0; index < 3; index += 1) await fx.createTask();
    expect(await deliverDue(worker({ secretBox: countingBox }))).toBe(3);
    // One by start()'s check of the key, then one per attempt.
    expect(opened).toEqual([id, id, id, id]);
    for (const received of receiver.received) expect(verifyWebhook(received.body, received.headers, secret, { now: fx.clock.now }).type).toBe('task.created');

    const rotated = 'whsec_rotatedrotatedrotatedrotatedrotatedrotat';
    fx.db.prepare('UPDATE webhook_subscriptions SET sealed_secret = ? WHERE id = ?').run(testSecretBox.seal(rotated, id), id);
    await fx.createTask();
    expect(await deliverDue(worker({ secretBox: countingBox }))).toBe(1);
    expect(opened).toEqual([id, id, id, id, id, id]);
    const last = receiver.received[3]!;
    expect(verifyWebhook(last.body, last.headers, rotated, { now: fx.clock.now }).type).toBe('task.created');
  });

  it('sends nothing for a delivery whose secret does not open, and leaves its claim to expire', async () => {
    await setUp();
    // The oldest subscription's secret opens, so start()'s check of the key passes.
    subscribe({ eventTypes: ['task.created'] });
    fx.clock.advance(1);
    const sealedElsewhere = subscribe({ eventTypes: ['task.created'], box: createSecretBox(Buffer.alloc(32, 9)) });
    await fx.createTask();
    expect(await deliverDue()).toBe(1);
    expect(receiver.received.map((r) => r.headers['svc-subscription-id'])).not.toContain(sealedElsewhere.id);
    const [unsigned] = deliveriesOf(fx.db, sealedElsewhere.id);
    expect(unsigned).toMatchObject({ status: 'PENDING', attempt_count: 0, lease_owner: expect.stringMatching(/^wkr_test\./) });
    expect(attemptsOf(fx.db, unsigned!.id)).toEqual([]);
    const logged = logLines.find((line) => line.includes('webhook delivery not signed'))!;
    expect(logged).toContain(sealedElsewhere.id);
    expect(logged).toMatch(/did not open/);
  });

  it('start() runs when no subscription exists yet', async () => {
    await setUp();
    const w = worker({ secretBox: createSecretBox(Buffer.alloc(32, 9)) });
    await expect(w.start()).resolves.toBeUndefined();
    await w.stop();
  });
});

describe('housekeeping jobs', () => {
  it('end rotation overlaps and purge logs and events older than 30 days, on valid cron expressions', async () => {
    await setUp();
    const { id } = subscribe({ eventTypes: ['task.created'], previous: { secret: 'whsec_old', expiresAt: fx.clock.now() + 1000 } });
    await fx.createTask();
    const w = worker();
    await deliverDue(w);
    const jobs = webhookHousekeeping(w.store, fx.clock.now);
    expect(jobs.map((job) => job.name)).toEqual(['end-webhook-rotation-overlaps', 'purge-webhook-deliveries', 'purge-outbox-events']);
    for (const job of jobs) expect(validateCron(job.every), job.every).toBe(true);
    expect(await runEach(jobs)).toEqual([0, 0, 0]);
    fx.clock.advance(WEBHOOK_LOG_RETENTION_MS + 1);
    expect(await runEach(jobs)).toEqual([1, 1, 2]);
    expect(subscriptionRow(fx.db, id).previous_secret_expires_at).toBeNull();
    expect(deliveriesOf(fx.db, id)).toEqual([]);
  });
});
