import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { loadWebhookSecretBox, type SecretBox } from '../../src/webhooks/secretBox.js';
import type { ContractClient } from '../support/contractClient.js';
import { contractOperations } from '../support/operations.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { expectProblem, expectSuccess, jsonHeaders, liftCallLimits, makePat, makeTestWorkspace, type TestWorkspace } from '../support/workPlatform.js';

/**
 * The webhook subscription API over HTTP: every operation's success path and documented
 * refusals, against the real server and database, every answer checked against the contract.
 * The server's clock is injected, so that the rotation overlap is exact and expires without waiting.
 */
const OVERLAP_MS = (58 * 60 + 45) * 60 * 1000;
let clock = Date.UTC(2026, 10, 23, 9, 41, 0);
let t: TestApp;
let client: ContractClient;
let fx: TestApp['fixture']['workPlatform'];
let box: SecretBox;
beforeAll(async () => {
  clock = Math.max(clock, Date.now());
  t = await startTestApp({ now: () => clock, env: { WEBHOOK_WORKER: 'off' } });
  client = t.workPlatformClient;
  fx = t.fixture.workPlatform;
  liftCallLimits(t.db, fx.workspaceId);
  liftCallLimits(t.db, fx.otherWorkspace.workspaceId);
  box = loadWebhookSecretBox(loadConfig({ DATABASE_PATH: path.join(t.dataDir, 'app.db') }));
});
afterAll(async () => {
  await t?.close();
});

const url = 'https://hooks.example.com/work-platform';
type Body = Record<string, unknown>;
const send = (method: string, target: string, options: { body?: unknown; token?: string; headers?: Record<string, string> } = {}) =>
  client.request(method, target, {
    headers: jsonHeaders(options.token ?? fx.tokens.all, options.headers),
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
const createWebhook = (body: Body, token?: string, headers?: Record<string, string>) => send('POST', '/v1/webhooks', { body, token, headers });
const getWebhook = (id: string, token?: string) => send('GET', `/v1/webhooks/${id}`, { token });
const updateWebhook = (id: string, body: Body, ifMatch?: string, token?: string) =>
  send('PATCH', `/v1/webhooks/${id}`, { body, token, headers: ifMatch === undefined ? {} : { 'if-match': ifMatch } });
const deleteWebhook = (id: string, headers: Record<string, string> = {}, token?: string) => send('DELETE', `/v1/webhooks/${id}`, { headers, token });
const rotate = (id: string, headers: Record<string, string> = {}, token?: string) => send('POST', `/v1/webhooks/${id}/rotate-key`, { headers, token });
const replay = (id: string, body: Body, token?: string) => send('POST', `/v1/webhooks/${id}/replays`, { body, token });
const deliveries = (id: string, query = '', token?: string) => send('GET', `/v1/webhooks/${id}/deliveries${query}`, { token });

/** A workspace of its own, so that counts and lists are exactly what the test made. */
function freshWorkspace(): TestWorkspace {
  const workspace = makeTestWorkspace(t.db, t.sessionSecret, { now: () => clock });
  liftCallLimits(t.db, workspace.workspaceId);
  return workspace;
}

async function newWebhook(body: Body = {}, token?: string): Promise<Body & { id: string; secret: string; version: number }> {
  return expectSuccess(await createWebhook({ url, eventTypes: ['task.created'], ...body }, token), 201);
}

/** Makes a task change through the API, so the outbox records an event (and fans it out). */
async function recordTaskEvent(token = fx.tokens.all, projectId = fx.projectId): Promise<string> {
  const task = expectSuccess(await send('POST', '/v1/tasks', { token, body: { projectId, title: 'Event source' } }), 201);
  return (t.db.prepare("SELECT id FROM events WHERE json_extract(payload, '$.data.object.id') = ?").pluck().get(task.id) as string);
}

const deliveryRows = (subscriptionId: string) =>
  t.db.prepare('SELECT * FROM webhook_deliveries WHERE subscription_id = ? ORDER BY created_at, rowid').all(subscriptionId) as Record<string, any>[];

describe('POST /v1/webhooks', () => {
  it('answers 201 with the subscription and its secret, Location and ETag; the secret is never shown again', async () => {
    const response = await createWebhook({ url, eventTypes: ['task.created', 'task.completed'], description: 'Billing sync' });
    const created = expectSuccess(response, 201);
    expect(created).toEqual({
      id: expect.stringMatching(/^whk_[A-Za-z0-9]+$/),
      url,
      description: 'Billing sync',
      eventTypes: ['task.created', 'task.completed'],
      status: 'ACTIVE',
      disabledReason: null,
      consecutiveFailedEvents: 0,
      signingKeyVersion: 1,
      previousSigningKeyExpiresAt: null,
      version: 1,
      createdAt: new Date(clock).toISOString(),
      updatedAt: new Date(clock).toISOString(),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
    });
    expect(response.headers['location']).toBe(`/v1/webhooks/${created.id}`);
    expect(response.headers['etag']).toBe('"1"');
    const { secret, ...webhook } = created;
    const fetched = await getWebhook(created.id);
    expect(expectSuccess(fetched, 200)).toEqual(webhook);
    expect(fetched.headers['etag']).toBe('"1"');
    const listed = expectSuccess(await send('GET', '/v1/webhooks?limit=100'), 200);
    expect(listed.items.find((item: Body) => item.id === created.id)).toEqual(webhook);
    for (const text of [fetched.text, JSON.stringify(listed)]) expect(text).not.toContain(secret);
  });

  it.each([
    ['http://hooks.example.com/x', 'https'],
    ['https://user:secret@hooks.example.com/x', 'user name or password'],
    ['https://10.1.2.3/x', 'not a public address (private)'],
    ['https://169.254.169.254/latest/meta-data', 'not a public address (linkLocal)'],
    ['https://[::1]/x', 'not a public address (loopback)'],
    ['https://[::ffff:127.0.0.1]/x', 'not a public address (ipv4Mapped:loopback)'],
    ['http://127.0.0.1:8080/x', 'https'],
  ])('answers 422 at /url (invalid_format) for %s, naming why, and creates nothing', async (refused, reason) => {
    const before = t.db.prepare('SELECT count(*) FROM webhook_subscriptions').pluck().get();
    const problem = expectProblem(await createWebhook({ url: refused, eventTypes: ['task.created'] }), 422, 'validation');
    expect(problem.errors).toEqual([{ path: '/url', code: 'invalid_format', message: expect.stringContaining(reason) }]);
    expect(t.db.prepare('SELECT count(*) FROM webhook_subscriptions').pluck().get()).toBe(before);
  });

  it('answers 422 for bodies the contract refuses, listing each field', async () => {
    const problem = expectProblem(await createWebhook({ url: '', eventTypes: ['task.exploded', 'task.created', 'task.created'], extra: 1 }), 422, 'validation');
    const paths = problem.errors.map((issue: { path: string }) => issue.path);
    expect(paths).toEqual(expect.arrayContaining(['/url', '/extra']));
    expect(paths.some((entry: string) => entry.startsWith('/eventTypes'))).toBe(true);
    expectProblem(await createWebhook({ url }), 422, 'validation');
  });

  it('answers 409 webhook-limit-reached past 20 subscriptions in a workspace', async () => {
    const workspace = freshWorkspace();
    for (let index = 0; index < 20; index += 1) await newWebhook({}, workspace.pat);
    expectProblem(await createWebhook({ url, eventTypes: ['task.created'] }, workspace.pat), 409, 'conflict', 'webhook-limit-reached');
    expect(t.db.prepare('SELECT count(*) FROM webhook_subscriptions WHERE workspace_id = ?').pluck().get(workspace.workspaceId)).toBe(20);
  });
});

describe('loopback targets', () => {
  let loopback: TestApp;
  beforeAll(async () => {
    loopback = await startTestApp({ env: { WEBHOOK_ALLOW_LOOPBACK: 'on', WEBHOOK_WORKER: 'off' } });
    liftCallLimits(loopback.db, loopback.fixture.workPlatform.workspaceId);
  });
  afterAll(async () => {
    await loopback?.close();
  });

  it('are accepted over http only with WEBHOOK_ALLOW_LOOPBACK on; private addresses stay refused', async () => {
    const post = (target: string) =>
      loopback.workPlatformClient.request('POST', '/v1/webhooks', {
        headers: jsonHeaders(loopback.fixture.workPlatform.tokens.all),
        body: JSON.stringify({ url: target, eventTypes: ['task.created'] }),
      });
    for (const target of ['http://127.0.0.1:8080/hook', 'http://[::1]:8080/hook', 'http://localhost:8080/hook']) {
      expect(expectSuccess(await post(target), 201).url).toBe(target);
      expectProblem(await createWebhook({ url: target, eventTypes: ['task.created'] }), 422, 'validation');
    }
    expectProblem(await post('https://10.0.0.1/hook'), 422, 'validation');
  });
});

describe('GET /v1/webhooks', () => {
  it('lists newest first in cursor pages, only this workspace\'s', async () => {
    const workspace = freshWorkspace();
    const ids: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      clock += 1000;
      ids.push((await newWebhook({ description: `#${index}` }, workspace.pat)).id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = expectSuccess(await send('GET', `/v1/webhooks${query}`, { token: workspace.pat }), 200);
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((item: { id: string }) => item.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());

    const firstPage = expectSuccess(await send('GET', '/v1/webhooks?limit=2', { token: workspace.pat }), 200);
    const foreign = await send('GET', `/v1/webhooks?limit=2&cursor=${encodeURIComponent(firstPage.nextCursor)}`);
    expectProblem(foreign, 422, 'validation', 'cursor-mismatch');
    expectProblem(await send('GET', '/v1/webhooks?cursor=garbage', { token: workspace.pat }), 422, 'validation', 'invalid-cursor');
  });

  it("never lists another workspace's subscription", async () => {
    const listed = expectSuccess(await send('GET', '/v1/webhooks?limit=100'), 200);
    expect(listed.items.map((item: { id: string }) => item.id)).not.toContain(fx.otherWorkspace.webhookId);
    const theirs = expectSuccess(await send('GET', '/v1/webhooks?limit=100', { token: fx.otherWorkspace.token }), 200);
    expect(theirs.items.map((item: { id: string }) => item.id)).toEqual([fx.otherWorkspace.webhookId]);
  });
});

describe('GET /v1/webhooks/{webhookId}', () => {
  it('answers 404 webhook-not-found for an unknown id, any text and another workspace\'s id', async () => {
    for (const id of ['whk_ZZZZZZZZZZZZZZZZZZZZ', 'not-an-id', fx.otherWorkspace.webhookId]) {
      expectProblem(await getWebhook(id), 404, 'not-found', 'webhook-not-found');
    }
  });
});

describe('PATCH /v1/webhooks/{webhookId}', () => {
  it('changes the given fields, one version per change, with If-Match bare or quoted; a no-op writes nothing', async () => {
    const webhook = await newWebhook();
    clock += 1000;
    const first = await updateWebhook(webhook.id, { description: 'Now described', eventTypes: ['task.created', 'project.created'] }, '1');
    expect(expectSuccess(first, 200)).toMatchObject({ description: 'Now described', eventTypes: ['task.created', 'project.created'], version: 2 });
    expect(first.headers['etag']).toBe('"2"');
    clock += 1000;
    const unchanged = await updateWebhook(webhook.id, { description: 'Now described', status: 'ACTIVE' }, '"2"');
    expect(expectSuccess(unchanged, 200)).toEqual(first.body);
    const moved = expectSuccess(await updateWebhook(webhook.id, { url: 'https://other.example.com/hooks' }, '2'), 200);
    expect(moved).toMatchObject({ url: 'https://other.example.com/hooks', version: 3 });
    expect(expectSuccess(await getWebhook(webhook.id), 200)).toEqual(moved);
  });

  it('answers 428 without If-Match, 409 version-conflict when stale, 400 for a malformed tag, 422 for a refused URL, and changes nothing', async () => {
    const webhook = await newWebhook();
    expectSuccess(await updateWebhook(webhook.id, { description: 'v2' }, '1'), 200);
    expectProblem(await updateWebhook(webhook.id, { description: 'lost' }), 428, 'precondition-required');
    expectProblem(await updateWebhook(webhook.id, { description: 'lost' }, '1'), 409, 'conflict', 'version-conflict');
    expectProblem(await updateWebhook(webhook.id, { description: 'lost' }, 'W/"2"'), 400, 'bad-request', 'invalid-if-match');
    const refused = expectProblem(await updateWebhook(webhook.id, { url: 'https://192.168.0.10/' }, '2'), 422, 'validation');
    expect(refused.errors).toEqual([{ path: '/url', code: 'invalid_format', message: expect.stringContaining('not a public address') }]);
    expectProblem(await updateWebhook(webhook.id, {}, '2'), 422, 'validation');
    expectProblem(await updateWebhook('whk_ZZZZZZZZZZZZZZZZZZZZ', { description: 'x' }, '1'), 404, 'not-found', 'webhook-not-found');
    expect(expectSuccess(await getWebhook(webhook.id), 200)).toMatchObject({ description: 'v2', url, version: 2 });
  });

  it('DISABLED pauses with reason MANUAL and cancels pending deliveries; ACTIVE re-enables and clears the reason', async () => {
    const webhook = await newWebhook({ eventTypes: ['task.created'] });
    await recordTaskEvent();
    await recordTaskEvent();
    expect(deliveryRows(webhook.id).map((row) => row.status)).toEqual(['PENDING', 'PENDING']);
    clock += 1000;
    const disabled = expectSuccess(await updateWebhook(webhook.id, { status: 'DISABLED' }, '1'), 200);
    expect(disabled).toMatchObject({
      status: 'DISABLED',
      disabledReason: { code: 'MANUAL', message: expect.any(String), disabledAt: new Date(clock).toISOString() },
      version: 2,
    });
    expect(deliveryRows(webhook.id).map((row) => [row.status, row.next_attempt_at, row.completed_at])).toEqual([
      ['CANCELLED', null, clock],
      ['CANCELLED', null, clock],
    ]);
    const listed = expectSuccess(await deliveries(webhook.id, '?status=CANCELLED'), 200);
    expect(listed.items).toHaveLength(2);
    // Events of the disabled time are not queued for it.
    await recordTaskEvent();
    expect(deliveryRows(webhook.id)).toHaveLength(2);

    t.db.prepare('UPDATE webhook_subscriptions SET consecutive_failed_events = 2 WHERE id = ?').run(webhook.id);
    const enabled = expectSuccess(await updateWebhook(webhook.id, { status: 'ACTIVE' }, '2'), 200);
    expect(enabled).toMatchObject({ status: 'ACTIVE', disabledReason: null, consecutiveFailedEvents: 0, version: 3 });
    expect(expectSuccess(await getWebhook(webhook.id), 200)).toEqual(enabled);
  });
});

describe('DELETE /v1/webhooks/{webhookId}', () => {
  it('answers 204 and removes the subscription with its delivery log; If-Match is checked when sent', async () => {
    const webhook = await newWebhook();
    await recordTaskEvent();
    expect(deliveryRows(webhook.id)).toHaveLength(1);
    expectProblem(await deleteWebhook(webhook.id, { 'if-match': '"7"' }), 409, 'conflict', 'version-conflict');
    const deleted = await deleteWebhook(webhook.id, { 'if-match': '1' });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expectProblem(await getWebhook(webhook.id), 404, 'not-found', 'webhook-not-found');
    expectProblem(await deleteWebhook(webhook.id), 404, 'not-found', 'webhook-not-found');
    expect(deliveryRows(webhook.id)).toEqual([]);
  });
});

describe('POST /v1/webhooks/{webhookId}/rotate-key', () => {
  it('rotates twice: exact overlap of 58 h 45 min, the older previous secret dropped, the overlap ending on time', async () => {
    const webhook = await newWebhook();
    const sealed = () => t.db.prepare('SELECT sealed_secret AS current, sealed_previous_secret AS previous FROM webhook_subscriptions WHERE id = ?').get(webhook.id) as { current: string; previous: string | null };
    clock += 60_000;
    const firstAt = clock;
    const first = expectSuccess(await rotate(webhook.id), 200);
    expect(first).toEqual({
      id: webhook.id,
      signingKeyVersion: 2,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
      previousSigningKeyExpiresAt: new Date(firstAt + OVERLAP_MS).toISOString(),
    });
    expect(first.secret).not.toBe(webhook.secret);
    expect(box.open(sealed().current, webhook.id)).toBe(first.secret);
    expect(box.open(sealed().previous!, webhook.id)).toBe(webhook.secret);
    const afterFirst = await getWebhook(webhook.id);
    expect(expectSuccess(afterFirst, 200)).toMatchObject({ signingKeyVersion: 2, previousSigningKeyExpiresAt: first.previousSigningKeyExpiresAt, version: 2 });
    expect(afterFirst.headers['etag']).toBe('"2"');

    clock += 3_600_000;
    const second = expectSuccess(await rotate(webhook.id), 200);
    expect(second).toMatchObject({ signingKeyVersion: 3, previousSigningKeyExpiresAt: new Date(clock + OVERLAP_MS).toISOString() });
    expect(box.open(sealed().current, webhook.id)).toBe(second.secret);
    expect(box.open(sealed().previous!, webhook.id)).toBe(first.secret);

    clock += OVERLAP_MS - 1;
    expect(expectSuccess(await getWebhook(webhook.id), 200).previousSigningKeyExpiresAt).toBe(second.previousSigningKeyExpiresAt);
    clock += 1;
    expect(expectSuccess(await getWebhook(webhook.id), 200)).toMatchObject({ previousSigningKeyExpiresAt: null, signingKeyVersion: 3, version: 3 });
  });

  it('answers 404 for an unknown or foreign subscription', async () => {
    expectProblem(await rotate('whk_ZZZZZZZZZZZZZZZZZZZZ'), 404, 'not-found', 'webhook-not-found');
    expectProblem(await rotate(fx.otherWorkspace.webhookId), 404, 'not-found', 'webhook-not-found');
  });
});

describe('POST /v1/webhooks/{webhookId}/replays', () => {
  it('queues one event with its own id and a new delivery id, PENDING now, replay true', async () => {
    const webhook = await newWebhook({ eventTypes: ['project.deleted'] });
    const eventId = await recordTaskEvent();
    clock += 1000;
    const response = await replay(webhook.id, { eventId });
    const queued = expectSuccess(response, 202);
    expect(queued).toEqual({ subscriptionId: webhook.id, eventCount: 1, deliveries: [{ id: expect.stringMatching(/^dlv_/), eventId, eventType: 'task.created' }] });
    const again = expectSuccess(await replay(webhook.id, { eventId }), 202);
    expect(again.deliveries[0].id).not.toBe(queued.deliveries[0].id);
    expect(again.deliveries[0].eventId).toBe(eventId);
    expect(deliveryRows(webhook.id).map((row) => [row.event_id, row.replay, row.status, row.next_attempt_at])).toEqual([
      [eventId, 1, 'PENDING', clock],
      [eventId, 1, 'PENDING', clock],
    ]);
    const listed = expectSuccess(await deliveries(webhook.id, `?eventId=${eventId}`), 200);
    expect(listed.items.map((item: Body) => [item.id, item.replay, item.attempts])).toEqual(
      expect.arrayContaining([
        [queued.deliveries[0].id, true, []],
        [again.deliveries[0].id, true, []],
      ]),
    );
  });

  it('queues a range of the subscription\'s types, oldest first; answers 0 for an empty range', async () => {
    const workspace = freshWorkspace();
    const webhook = await newWebhook({ eventTypes: ['task.created'] }, workspace.pat);
    const from = clock + 1;
    const ids: string[] = [];
    for (let index = 0; index < 3; index += 1) {
      clock += 1000;
      ids.push(await recordTaskEvent(workspace.pat, workspace.projectId));
      expectSuccess(await send('PATCH', `/v1/projects/${workspace.projectId}`, { token: workspace.pat, body: { name: `Renamed ${index}` }, headers: { 'if-match': String(index + 1) } }), 200);
    }
    const queued = expectSuccess(await replay(webhook.id, { from: new Date(from).toISOString(), to: new Date(clock + 1).toISOString() }, workspace.pat), 202);
    expect(queued.eventCount).toBe(3);
    expect(queued.deliveries.map((delivery: Body) => delivery.eventId)).toEqual(ids);
    expect(queued.deliveries.every((delivery: Body) => delivery.eventType === 'task.created')).toBe(true);
    const empty = expectSuccess(await replay(webhook.id, { from: '2020-01-01T00:00:00.000Z', to: '2020-01-02T00:00:00.000Z' }, workspace.pat), 202);
    expect(empty).toEqual({ subscriptionId: webhook.id, eventCount: 0, deliveries: [] });
  });

  it('answers 422 at /to when the range ends at or before its start, or holds more than 1000 events, queueing nothing', async () => {
    const workspace = freshWorkspace();
    const webhook = await newWebhook({ eventTypes: ['task.created'] }, workspace.pat);
    const at = new Date(clock).toISOString();
    const backwards = expectProblem(await replay(webhook.id, { from: at, to: new Date(clock - 1).toISOString() }, workspace.pat), 422, 'validation');
    expect(backwards.errors).toEqual([{ path: '/to', code: 'too_small', message: expect.any(String) }]);
    expectProblem(await replay(webhook.id, { from: at, to: at }, workspace.pat), 422, 'validation');

    const insert = t.db.prepare("INSERT INTO events (id, workspace_id, type, occurred_at, payload) VALUES (?, ?, 'task.created', ?, '{}')");
    t.db.transaction(() => {
      for (let index = 0; index < 1001; index += 1) insert.run(`evt_bulk${index}x${workspace.workspaceId.slice(4)}`, workspace.workspaceId, clock - 10_000 + index);
    })();
    const range = { from: new Date(clock - 10_000).toISOString(), to: new Date(clock).toISOString() };
    const tooMany = expectProblem(await replay(webhook.id, range, workspace.pat), 422, 'validation');
    expect(tooMany.errors).toEqual([{ path: '/to', code: 'too_big', message: expect.stringContaining('1000') }]);
    expect(deliveryRows(webhook.id)).toEqual([]);
  });

  it('answers 404 event-not-found for an unknown event or another workspace\'s, 404 webhook-not-found, 409 webhook-disabled, 422 for a body of neither form', async () => {
    const webhook = await newWebhook();
    const foreignEvent = await recordTaskEvent(fx.otherWorkspace.token, fx.otherWorkspace.projectId);
    expectProblem(await replay(webhook.id, { eventId: foreignEvent }), 404, 'not-found', 'event-not-found');
    expectProblem(await replay(webhook.id, { eventId: 'evt_neverIssuedAtAll' }), 404, 'not-found', 'event-not-found');
    expectProblem(await replay(fx.otherWorkspace.webhookId, { eventId: foreignEvent }), 404, 'not-found', 'webhook-not-found');
    expectProblem(await replay(webhook.id, { eventId: 'evt_x', from: '2026-01-01T00:00:00Z' }), 422, 'validation');
    expectProblem(await replay(webhook.id, {}), 422, 'validation');
    const ownEvent = await recordTaskEvent();
    expectSuccess(await updateWebhook(webhook.id, { status: 'DISABLED' }, '1'), 200);
    expectProblem(await replay(webhook.id, { eventId: ownEvent }), 409, 'conflict', 'webhook-disabled');
    expect(deliveryRows(webhook.id).filter((row) => row.replay === 1)).toEqual([]);
  });
});

describe('GET /v1/webhooks/{webhookId}/deliveries', () => {
  it('pages newest first with attempts; filters by status and event, with cursors bound to the filters', async () => {
    const webhook = await newWebhook({ eventTypes: ['task.created'] });
    const events: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      clock += 1000;
      events.push(await recordTaskEvent());
    }
    const rows = deliveryRows(webhook.id);
    expect(rows).toHaveLength(5);
    t.db
      .prepare('INSERT INTO webhook_attempts (delivery_id, number, attempted_at, duration_ms, status_code, error_code, error_message, succeeded, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)')
      .run(rows[0]!.id, 1, clock, 10_000, null, 'dns-failure', 'hooks.example.com did not resolve', 0, clock + 30_000);
    t.db.prepare("UPDATE webhook_deliveries SET status = 'SUCCEEDED', next_attempt_at = NULL, completed_at = ? WHERE id = ?").run(clock, rows[1]!.id);

    const walked: Body[] = [];
    let cursor: string | null = null;
    do {
      const page: Body = expectSuccess(await deliveries(webhook.id, `?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`), 200);
      walked.push(...(page.items as Body[]));
      cursor = page.nextCursor as string | null;
    } while (cursor);
    expect(walked.map((item) => item.id)).toEqual([...rows].reverse().map((row) => row.id));
    expect(walked.at(-1)).toMatchObject({
      id: rows[0]!.id,
      subscriptionId: webhook.id,
      eventId: events[0],
      eventType: 'task.created',
      replay: false,
      status: 'PENDING',
      attempts: [
        {
          number: 1,
          attemptedAt: new Date(clock).toISOString(),
          durationMs: 10_000,
          statusCode: null,
          error: { code: 'dns-failure', message: 'hooks.example.com did not resolve' },
          succeeded: false,
          nextAttemptAt: new Date(clock + 30_000).toISOString(),
        },
      ],
    });

    const succeeded = expectSuccess(await deliveries(webhook.id, '?status=SUCCEEDED'), 200);
    expect(succeeded).toEqual({ items: [expect.objectContaining({ id: rows[1]!.id, status: 'SUCCEEDED', nextAttemptAt: null })], nextCursor: null });
    const ofEvent = expectSuccess(await deliveries(webhook.id, `?eventId=${events[2]}`), 200);
    expect(ofEvent.items.map((item: Body) => item.id)).toEqual([rows[2]!.id]);

    const pending = expectSuccess(await deliveries(webhook.id, '?status=PENDING&limit=1'), 200);
    expect(pending.nextCursor).toEqual(expect.any(String));
    const cursorQuery = `cursor=${encodeURIComponent(pending.nextCursor)}`;
    expectSuccess(await deliveries(webhook.id, `?status=PENDING&limit=1&${cursorQuery}`), 200);
    expectProblem(await deliveries(webhook.id, `?limit=1&${cursorQuery}`), 422, 'validation', 'cursor-mismatch');
    expectProblem(await deliveries(webhook.id, `?status=FAILED&limit=1&${cursorQuery}`), 422, 'validation', 'cursor-mismatch');
    expectProblem(await deliveries(webhook.id, `?status=PENDING&eventId=${events[0]}&limit=1&${cursorQuery}`), 422, 'validation', 'cursor-mismatch');
    const otherWebhook = await newWebhook();
    expectProblem(await deliveries(otherWebhook.id, `?status=PENDING&limit=1&${cursorQuery}`), 422, 'validation', 'cursor-mismatch');
    expectProblem(await deliveries(webhook.id, '?status=LOST'), 422, 'validation');
    expectProblem(await deliveries(webhook.id, '?eventId=nope'), 422, 'validation');
  });

  it('answers 404 webhook-not-found for an unknown or foreign subscription', async () => {
    expectProblem(await deliveries('whk_ZZZZZZZZZZZZZZZZZZZZ'), 404, 'not-found', 'webhook-not-found');
    expectProblem(await deliveries(fx.otherWorkspace.webhookId), 404, 'not-found', 'webhook-not-found');
  });
});

describe('scopes', () => {
  const webhookOperations = contractOperations('work-platform').filter((operation) => operation.template.startsWith('/v1/webhooks'));

  it('covers the eight webhook operations', () => {
    expect(webhookOperations.map((operation) => operation.operationId).sort()).toEqual(
      ['createWebhook', 'deleteWebhook', 'getWebhook', 'listWebhookDeliveries', 'listWebhooks', 'replayWebhookEvents', 'rotateWebhookKey', 'updateWebhook'],
    );
    for (const operation of webhookOperations) expect(operation.requiredScopes).toEqual(['webhooks:manage']);
  });

  it.each(webhookOperations.map((operation) => [operation.operationId, operation] as const))(
    '%s answers 403 insufficient-scope to a token with every other scope, and acts for one with only webhooks:manage',
    async (_operationId, operation) => {
      const workspace = freshWorkspace();
      const everythingElse = makePat(t.db, workspace.workspaceId, ['tasks:read', 'tasks:write', 'projects:read', 'projects:write', 'workspace:read'], { userId: workspace.ownerId });
      const onlyWebhooks = makePat(t.db, workspace.workspaceId, ['webhooks:manage'], { userId: workspace.ownerId });
      const target = await newWebhook({}, workspace.pat);
      const resourcePath = operation.template.replace('{webhookId}', target.id);
      const body = operation.operationId === 'createWebhook' ? { url, eventTypes: ['task.created'] } : operation.operationId === 'replayWebhookEvents' ? { from: '2020-01-01T00:00:00Z', to: '2020-01-02T00:00:00Z' } : operation.operationId === 'updateWebhook' ? { description: 'scoped' } : undefined;
      const headers: Record<string, string> = operation.operationId === 'updateWebhook' ? { 'if-match': '1' } : {};
      const refused = expectProblem(await send(operation.method, resourcePath, { token: everythingElse, body, headers }), 403, 'insufficient-scope');
      expect(refused.requiredScopes).toEqual(['webhooks:manage']);
      const accepted = await send(operation.method, resourcePath, { token: onlyWebhooks, body, headers });
      expect(accepted.status, accepted.text).toBeLessThan(300);
    },
  );
});

describe('signing secrets at rest', () => {
  function databaseBytes(): Buffer {
    const file = path.join(t.dataDir, 'app.db');
    return Buffer.concat([file, `${file}-wal`].filter((candidate) => existsSync(candidate)).map((candidate) => readFileSync(candidate)));
  }

  it('are never written in plaintext, not even in the stored idempotent answers, which still replay verbatim', async () => {
    const key = `create-${clock}`;
    const created = await createWebhook({ url, eventTypes: ['task.created'] }, undefined, { 'idempotency-key': key });
    const webhook = expectSuccess(created, 201);
    const createdAgain = await createWebhook({ url, eventTypes: ['task.created'] }, undefined, { 'idempotency-key': key });
    expect(createdAgain.status).toBe(201);
    expect(createdAgain.headers['idempotent-replayed']).toBe('true');
    expect(createdAgain.text).toBe(created.text);
    expect(createdAgain.headers['location']).toBe(created.headers['location']);

    const rotateKey = `rotate-${clock}`;
    const rotated = await rotate(webhook.id, { 'idempotency-key': rotateKey });
    const rotation = expectSuccess(rotated, 200);
    const rotatedAgain = await rotate(webhook.id, { 'idempotency-key': rotateKey });
    expect(rotatedAgain.headers['idempotent-replayed']).toBe('true');
    expect(rotatedAgain.text).toBe(rotated.text);
    expect(expectSuccess(await getWebhook(webhook.id), 200).signingKeyVersion).toBe(2);
    // The same key for another subscription's rotation is refused, not answered with this secret.
    const another = await newWebhook();
    const reused = expectProblem(await rotate(another.id, { 'idempotency-key': rotateKey }), 409, 'conflict', 'idempotency-key-reused');
    expect(JSON.stringify(reused)).not.toContain(rotation.secret);

    expect(t.db.prepare('SELECT count(*) FROM idempotency_keys WHERE key IN (?, ?)').pluck().get(key, rotateKey)).toBe(2);
    const bytes = databaseBytes();
    expect(bytes.length).toBeGreaterThan(0);
    for (const secret of [webhook.secret, rotation.secret, another.secret, fx.webhook.secret]) {
      expect(bytes.includes(Buffer.from(secret, 'utf8'))).toBe(false);
      expect(bytes.includes(Buffer.from(secret.slice('whsec_'.length), 'utf8'))).toBe(false);
    }
    const log = t.logLines.join('\n');
    for (const secret of [webhook.secret, rotation.secret, another.secret, fx.webhook.secret]) expect(log).not.toContain(secret.slice('whsec_'.length));
  });
});
