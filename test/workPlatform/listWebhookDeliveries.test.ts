import { describe, expect, it } from 'vitest';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { webhookCalls } from '../support/webhookCalls.js';
import { expectProblem, expectSuccess } from '../support/workPlatform.js';

// The server's clock is injected, so that times in answers are exact and move only when a test moves them.
let clock = Math.max(Date.UTC(2026, 10, 23, 9, 41, 0), Date.now());
let t: TestApp;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, fx } = app), { liftCallLimits: true, now: () => clock });

const { deliveries, newWebhook, recordTaskEvent, deliveryRows } = webhookCalls(() => ({ t, client: t.workPlatformClient, fx }), () => clock);
type Body = Record<string, unknown>;

describe('GET /v1/webhooks/{webhookId}/deliveries', () => {
  it('pages newest first with attempts; filters by status and event, with cursors bound to the filters', async () => {
    const webhook = await newWebhook({ eventTypes: ['task.created'] });
    const events: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      clock += 1000;
      events.push(await recordTaskEvent());
    }
    const rows = await deliveryRows(webhook.id);
    expect(rows).toHaveLength(5);
    await t.sql.run(
      'INSERT INTO webhook_attempts (delivery_id, number, attempted_at, duration_ms, status_code, error_code, error_message, succeeded, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      rows[0]!.id, 1, clock, 10_000, null, 'dns-failure', 'hooks.example.com did not resolve', 0, clock + 30_000,
    );
    await t.sql.run("UPDATE webhook_deliveries SET status = 'SUCCEEDED', next_attempt_at = NULL, completed_at = ? WHERE id = ?", clock, rows[1]!.id);

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
