import { describe, expect, it } from 'vitest';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { webhookCalls } from '../support/webhookCalls.js';
import { expectProblem } from '../support/workPlatform.js';

// The server's clock is injected, so that times in answers are exact and move only when a test moves them.
let clock = Math.max(Date.UTC(2026, 10, 23, 9, 41, 0), Date.now());
let t: TestApp;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, fx } = app), { liftCallLimits: true, now: () => clock });

const { deleteWebhook, getWebhook, newWebhook, recordTaskEvent, deliveryRows } = webhookCalls(() => ({ t, client: t.workPlatformClient, fx }), () => clock);

describe('DELETE /v1/webhooks/{webhookId}', () => {
  it('answers 204 and removes the subscription with its delivery log; If-Match is checked when sent', async () => {
    const webhook = await newWebhook();
    await recordTaskEvent();
    expect(await deliveryRows(webhook.id)).toHaveLength(1);
    expectProblem(await deleteWebhook(webhook.id, { 'if-match': '"7"' }), 409, 'conflict', 'version-conflict');
    const deleted = await deleteWebhook(webhook.id, { 'if-match': '1' });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expectProblem(await getWebhook(webhook.id), 404, 'not-found', 'webhook-not-found');
    expectProblem(await deleteWebhook(webhook.id), 404, 'not-found', 'webhook-not-found');
    expect(await deliveryRows(webhook.id)).toEqual([]);
  });
});
