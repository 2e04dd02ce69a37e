import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import type { TestApp } from '../support/testApp.js';
import { webhookCalls, webhookUrl as url } from '../support/webhookCalls.js';
import { demoUsers, expectProblem, expectSuccess, jsonHeaders, liftCallLimits } from '../support/workPlatform.js';
import { fakeDnsResolver } from '../support/fakeDns.js';
import { CREATE_RESOLUTION_TIMEOUT_MS } from '../../src/webhooks/subscriptions.js';

// What the server's resolver answers; any other name does not exist.
const dns = fakeDnsResolver({
  'hooks.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
  'internal.example.com': ['10.20.30.40'],
  'split.example.com': ['93.184.216.34', 'fd12::1'],
  'loop.example.com': ['127.0.0.1'],
  'metadata.example.com': ['169.254.169.254'],
  'stuck.example.com': 'never',
  'failing.example.com': { code: 'ESERVFAIL' },
});

// The server's clock is injected, so that times in answers are exact and move only when a test moves them.
let clock = Math.max(Date.UTC(2026, 10, 23, 9, 41, 0), Date.now());
let t: TestApp;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, fx } = app), { liftCallLimits: true, now: () => clock, dns });

const { createWebhook, getWebhook, send, freshWorkspace, newWebhook } = webhookCalls(() => ({ t, client: t.workPlatformClient, fx }), () => clock);
type Body = Record<string, unknown>;

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
      createdBy: demoUsers.owner.id,
      creatorRemoved: false,
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
    const before = (await t.sql.value('SELECT count(*) FROM webhook_subscriptions'));
    const problem = expectProblem(await createWebhook({ url: refused, eventTypes: ['task.created'] }), 422, 'validation');
    expect(problem.errors).toEqual([{ path: '/url', code: 'invalid_format', message: expect.stringContaining(reason) }]);
    expect((await t.sql.value('SELECT count(*) FROM webhook_subscriptions'))).toBe(before);
  });

  it('answers 422 for bodies the contract refuses, listing each field', async () => {
    const problem = expectProblem(await createWebhook({ url: '', eventTypes: ['task.exploded', 'task.created', 'task.created'], extra: 1 }), 422, 'validation');
    const paths = problem.errors.map((issue: { path: string }) => issue.path);
    expect(paths).toEqual(expect.arrayContaining(['/url', '/extra']));
    expect(paths.some((entry: string) => entry.startsWith('/eventTypes'))).toBe(true);
    expectProblem(await createWebhook({ url }), 422, 'validation');
  });

  it('answers 409 webhook-limit-reached past 20 subscriptions in a workspace', async () => {
    const workspace = await freshWorkspace();
    for (let index = 0; index < 20; index += 1) await newWebhook({}, workspace.pat);
    expectProblem(await createWebhook({ url, eventTypes: ['task.created'] }, workspace.pat), 409, 'conflict', 'webhook-limit-reached');
    expect((await t.sql.value('SELECT count(*) FROM webhook_subscriptions WHERE workspace_id = ?', workspace.workspaceId))).toBe(20);
  });
});

describe('host names, resolved at creation', () => {
  it.each([
    ['https://internal.example.com/x', 'a private address'],
    ['https://split.example.com/x', 'a public and a unique-local address'],
    ['https://loop.example.com/x', 'a loopback address'],
    ['https://metadata.example.com/latest', 'the metadata address'],
  ])('answers the literal 422 at /url (invalid_format) for %s, which resolves to %s, naming no address', async (refused) => {
    const before = await t.sql.value('SELECT count(*) FROM webhook_subscriptions');
    const problem = expectProblem(await createWebhook({ url: refused, eventTypes: ['task.created'] }), 422, 'validation');
    const host = new URL(refused).hostname;
    expect(problem.errors).toEqual([{ path: '/url', code: 'invalid_format', message: `is refused: the host ${host} resolves to a non-public address` }]);
    expect(JSON.stringify(problem)).not.toMatch(/10\.20\.30\.40|fd12|127\.0\.0\.1|169\.254/);
    expect(await t.sql.value('SELECT count(*) FROM webhook_subscriptions')).toBe(before);
  });

  it('accepts a name whose every address is public, one that does not resolve, and one whose resolver fails', async () => {
    for (const accepted of ['https://hooks.example.com/in', 'https://nowhere.example.net/in', 'https://failing.example.com/in']) {
      expect(expectSuccess(await createWebhook({ url: accepted, eventTypes: ['task.created'] }), 201).url).toBe(accepted);
    }
  });

  it(`accepts a name whose resolver does not answer once ${CREATE_RESOLUTION_TIMEOUT_MS} ms have passed`, async () => {
    const started = performance.now();
    const created = expectSuccess(await createWebhook({ url: 'https://stuck.example.com/in', eventTypes: ['task.created'] }), 201);
    const waited = performance.now() - started;
    expect(created.url).toBe('https://stuck.example.com/in');
    expect(waited).toBeGreaterThanOrEqual(CREATE_RESOLUTION_TIMEOUT_MS - 50);
    expect(waited).toBeLessThan(CREATE_RESOLUTION_TIMEOUT_MS + 2_000);
  });

  it('asks the resolver once for a name it has answered: the answer is cached', async () => {
    const asked = () => dns.asked.filter((query) => query.endsWith(' internal.example.com')).length;
    expectProblem(await createWebhook({ url: 'https://internal.example.com/once', eventTypes: ['task.created'] }), 422, 'validation');
    expectProblem(await createWebhook({ url: 'https://internal.example.com/twice', eventTypes: ['task.created'] }), 422, 'validation');
    // One A and one AAAA query, whichever test asked first (the server's clock stands still: nothing expires).
    expect(asked()).toBe(2);
  });
});

describe('loopback targets', () => {
  let loopback: TestApp;
  beforeAll(async () => {
    loopback = await startTestApp({ env: { WEBHOOK_ALLOW_LOOPBACK: 'on', WEBHOOK_WORKER: 'off' }, dns });
    await liftCallLimits(loopback.store, loopback.fixture.workPlatform.workspaceId);
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
    // As with the literal: a name resolving to loopback is admitted with the flag, one resolving to a private address is not.
    expect(expectSuccess(await post('https://loop.example.com/hook'), 201).url).toBe('https://loop.example.com/hook');
    expectProblem(await post('https://internal.example.com/hook'), 422, 'validation');
  });
});
