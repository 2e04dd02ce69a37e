import { describe, expect, it } from 'vitest';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { webhookCalls, webhookUrl as url } from '../support/webhookCalls.js';
import { expectProblem, expectSuccess } from '../support/workPlatform.js';
import { fakeDnsResolver } from '../support/fakeDns.js';

const dns = fakeDnsResolver({ 'other.example.com': ['93.184.216.34'], 'internal.example.com': ['192.168.7.7'] });

// The server's clock is injected, so that times in answers are exact and move only when a test moves them.
let clock = Math.max(Date.UTC(2026, 10, 23, 9, 41, 0), Date.now());
let t: TestApp;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, fx } = app), { liftCallLimits: true, now: () => clock, dns });

const { updateWebhook, getWebhook, deliveries, newWebhook, recordTaskEvent, deliveryRows } = webhookCalls(() => ({ t, client: t.workPlatformClient, fx }), () => clock);

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
    // A name that does not resolve is accepted too.
    expect(expectSuccess(await updateWebhook(webhook.id, { url: 'https://not-yet.example.org/hooks' }, '3'), 200)).toMatchObject({ version: 4 });
  });

  it('answers 428 without If-Match, 409 version-conflict when stale, 400 for a malformed tag, 422 for a refused URL (a private literal, or a name resolving to one), and changes nothing', async () => {
    const webhook = await newWebhook();
    expectSuccess(await updateWebhook(webhook.id, { description: 'v2' }, '1'), 200);
    expectProblem(await updateWebhook(webhook.id, { description: 'lost' }), 428, 'precondition-required');
    expectProblem(await updateWebhook(webhook.id, { description: 'lost' }, '1'), 409, 'conflict', 'version-conflict');
    expectProblem(await updateWebhook(webhook.id, { description: 'lost' }, 'W/"2"'), 400, 'bad-request', 'invalid-if-match');
    const refused = expectProblem(await updateWebhook(webhook.id, { url: 'https://192.168.0.10/' }, '2'), 422, 'validation');
    expect(refused.errors).toEqual([{ path: '/url', code: 'invalid_format', message: expect.stringContaining('not a public address') }]);
    const resolvesPrivate = expectProblem(await updateWebhook(webhook.id, { url: 'https://internal.example.com/' }, '2'), 422, 'validation');
    expect(resolvesPrivate.errors).toEqual([{ path: '/url', code: 'invalid_format', message: 'is refused: the host internal.example.com resolves to a non-public address' }]);
    expect(JSON.stringify(resolvesPrivate)).not.toContain('192.168');
    expectProblem(await updateWebhook(webhook.id, {}, '2'), 422, 'validation');
    expectProblem(await updateWebhook('whk_ZZZZZZZZZZZZZZZZZZZZ', { description: 'x' }, '1'), 404, 'not-found', 'webhook-not-found');
    expect(expectSuccess(await getWebhook(webhook.id), 200)).toMatchObject({ description: 'v2', url, version: 2 });
  });

  it('DISABLED pauses with reason MANUAL and cancels pending deliveries; ACTIVE re-enables and clears the reason', async () => {
    const webhook = await newWebhook({ eventTypes: ['task.created'] });
    await recordTaskEvent();
    await recordTaskEvent();
    expect((await deliveryRows(webhook.id)).map((row) => row.status)).toEqual(['PENDING', 'PENDING']);
    clock += 1000;
    const disabled = expectSuccess(await updateWebhook(webhook.id, { status: 'DISABLED' }, '1'), 200);
    expect(disabled).toMatchObject({
      status: 'DISABLED',
      disabledReason: { code: 'MANUAL', message: expect.any(String), disabledAt: new Date(clock).toISOString() },
      version: 2,
    });
    expect((await deliveryRows(webhook.id)).map((row) => [row.status, row.next_attempt_at, row.completed_at])).toEqual([
      ['CANCELLED', null, clock],
      ['CANCELLED', null, clock],
    ]);
    const listed = expectSuccess(await deliveries(webhook.id, '?status=CANCELLED'), 200);
    expect(listed.items).toHaveLength(2);
    // Events of the disabled time are not queued for it.
    await recordTaskEvent();
    expect(await deliveryRows(webhook.id)).toHaveLength(2);

    await t.sql.run('UPDATE webhook_subscriptions SET consecutive_failed_events = 2 WHERE id = ?', webhook.id);
    const enabled = expectSuccess(await updateWebhook(webhook.id, { status: 'ACTIVE' }, '2'), 200);
    expect(enabled).toMatchObject({ status: 'ACTIVE', disabledReason: null, consecutiveFailedEvents: 0, version: 3 });
    expect(expectSuccess(await getWebhook(webhook.id), 200)).toEqual(enabled);
  });
});
