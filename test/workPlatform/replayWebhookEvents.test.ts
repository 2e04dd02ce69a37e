import { describe, expect, it } from 'vitest';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { webhookCalls } from '../support/webhookCalls.js';
import { expectProblem, expectSuccess } from '../support/workPlatform.js';

// The server's clock is injected, so that times in answers are exact and move only when a test moves them.
let clock = Math.max(Date.UTC(2026, 10, 23, 9, 41, 0), Date.now());
let t: TestApp;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, fx } = app), { liftCallLimits: true, now: () => clock });

const { send, replay, updateWebhook, deliveries, freshWorkspace, newWebhook, recordTaskEvent, deliveryRows } = webhookCalls(() => ({ t, client: t.workPlatformClient, fx }), () => clock);
type Body = Record<string, unknown>;

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
    expect((await deliveryRows(webhook.id)).map((row) => [row.event_id, Number(row.replay), row.status, row.next_attempt_at])).toEqual([
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
    const workspace = await freshWorkspace();
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
    const workspace = await freshWorkspace();
    const webhook = await newWebhook({ eventTypes: ['task.created'] }, workspace.pat);
    const at = new Date(clock).toISOString();
    const backwards = expectProblem(await replay(webhook.id, { from: at, to: new Date(clock - 1).toISOString() }, workspace.pat), 422, 'validation');
    expect(backwards.errors).toEqual([{ path: '/to', code: 'too_small', message: expect.any(String) }]);
    expectProblem(await replay(webhook.id, { from: at, to: at }, workspace.pat), 422, 'validation');

    const bulk = Array.from({ length: 1001 }, (_, index) => [`evt_bulk${index}x${workspace.workspaceId.slice(4)}`, workspace.workspaceId, clock - 10_000 + index]);
    await t.sql.run(`INSERT INTO events (id, workspace_id, type, occurred_at, payload) VALUES ${bulk.map(() => "(?, ?, 'task.created', ?, '{}')").join(', ')}`, ...bulk.flat());
    const range = { from: new Date(clock - 10_000).toISOString(), to: new Date(clock).toISOString() };
    const tooMany = expectProblem(await replay(webhook.id, range, workspace.pat), 422, 'validation');
    expect(tooMany.errors).toEqual([{ path: '/to', code: 'too_big', message: expect.stringContaining('1000') }]);
    expect(await deliveryRows(webhook.id)).toEqual([]);
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
    expect((await deliveryRows(webhook.id)).filter((row) => Number(row.replay) === 1)).toEqual([]);
  });
});
