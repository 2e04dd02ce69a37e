import { describe, expect, it } from 'vitest';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { webhookCalls } from '../support/webhookCalls.js';
import { expectProblem, expectSuccess } from '../support/workPlatform.js';

// The server's clock is injected, so that times in answers are exact and move only when a test moves them.
let clock = Math.max(Date.UTC(2026, 10, 23, 9, 41, 0), Date.now());
let t: TestApp;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, fx } = app), { liftCallLimits: true, now: () => clock });

const { send, freshWorkspace, newWebhook } = webhookCalls(() => ({ t, client: t.workPlatformClient, fx }), () => clock);

describe('GET /v1/webhooks', () => {
  it('lists newest first in cursor pages, only this workspace\'s', async () => {
    const workspace = await freshWorkspace();
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
