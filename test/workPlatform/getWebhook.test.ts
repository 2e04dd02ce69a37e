import { describe, expect, it } from 'vitest';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { webhookCalls } from '../support/webhookCalls.js';
import { expectProblem, expectSuccess } from '../support/workPlatform.js';

// The server's clock is injected, so that times in answers are exact and move only when a test moves them.
let clock = Math.max(Date.UTC(2026, 10, 23, 9, 41, 0), Date.now());
let t: TestApp;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, fx } = app), { liftCallLimits: true, now: () => clock });

const { getWebhook } = webhookCalls(() => ({ t, client: t.workPlatformClient, fx }), () => clock);
type Body = Record<string, unknown>;

describe('GET /v1/webhooks/{webhookId}', () => {
  it('answers 200 with the demo subscription and its ETag, never its signing secret', async () => {
    const response = await getWebhook(fx.webhook.id);
    const webhook: Body = expectSuccess(response, 200);
    expect(webhook).toMatchObject({ id: fx.webhook.id, status: 'ACTIVE', signingKeyVersion: 1, version: 1 });
    expect(webhook).not.toHaveProperty('secret');
    expect(response.headers['etag']).toBe('"1"');
    expect(response.text).not.toContain(fx.webhook.secret.slice('whsec_'.length));
  });

  it('answers 404 webhook-not-found for an unknown id, any text and another workspace\'s id', async () => {
    for (const id of ['whk_ZZZZZZZZZZZZZZZZZZZZ', 'not-an-id', fx.otherWorkspace.webhookId]) {
      expectProblem(await getWebhook(id), 404, 'not-found', 'webhook-not-found');
    }
  });
});
