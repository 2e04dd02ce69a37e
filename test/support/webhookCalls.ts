// The webhook subscription calls of the test/workPlatform/*Webhook*.test.ts operation suites,
// against a test app whose clock the suite controls.
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { loadSealingBox, type SecretBox } from '../../src/auth/secretBox.js';
import { type TestApp, type WorkPlatformTestApp } from './testApp.js';
import { eventsAbout, expectSuccess, insertionOrderSql, jsonHeaders, liftCallLimits, makeTestWorkspace, type TestWorkspace } from './workPlatform.js';

/** A public HTTPS target the address guard accepts (nothing is delivered: the worker is off). */
export const webhookUrl = 'https://hooks.example.com/work-platform';

/** How long a rotated-out signing secret keeps signing: 58 h 45 min. */
export const OVERLAP_MS = (58 * 60 + 45) * 60 * 1000;

type Body = Record<string, unknown>;

/** The box that opens the app's stored signing secrets. */
export function webhookSecretBoxOf(t: TestApp): SecretBox {
  return loadSealingBox(loadConfig({ DATABASE_PATH: path.join(t.dataDir, 'app.db') }));
}

/**
 * The webhook calls, as the demo owner's all-scope PAT unless a token is given. `app` and `clock`
 * are read at each call.
 */
export function webhookCalls(app: () => WorkPlatformTestApp, clock: () => number) {
  const send = (method: string, target: string, options: { body?: unknown; token?: string; headers?: Record<string, string> } = {}) =>
    app().client.request(method, target, {
      headers: jsonHeaders(options.token ?? app().fx.tokens.all, options.headers),
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
  const createWebhook = (body: Body, token?: string, headers?: Record<string, string>) => send('POST', '/v1/webhooks', { body, token, headers });
  return {
    send,
    createWebhook,
    getWebhook: (id: string, token?: string) => send('GET', `/v1/webhooks/${id}`, { token }),
    updateWebhook: (id: string, body: Body, ifMatch?: string, token?: string) =>
      send('PATCH', `/v1/webhooks/${id}`, { body, token, headers: ifMatch === undefined ? {} : { 'if-match': ifMatch } }),
    deleteWebhook: (id: string, headers: Record<string, string> = {}, token?: string) => send('DELETE', `/v1/webhooks/${id}`, { headers, token }),
    rotate: (id: string, headers: Record<string, string> = {}, token?: string) => send('POST', `/v1/webhooks/${id}/rotate-key`, { headers, token }),
    replay: (id: string, body: Body, token?: string) => send('POST', `/v1/webhooks/${id}/replays`, { body, token }),
    deliveries: (id: string, query = '', token?: string) => send('GET', `/v1/webhooks/${id}/deliveries${query}`, { token }),

    /** A workspace of its own, so that counts and lists are exactly what the test made. */
    async freshWorkspace(): Promise<TestWorkspace> {
      const workspace = await makeTestWorkspace(app().t.store, app().t.sessionSecret, { now: clock });
      await liftCallLimits(app().t.store, workspace.workspaceId);
      return workspace;
    },

    async newWebhook(body: Body = {}, token?: string): Promise<Body & { id: string; secret: string; version: number }> {
      return expectSuccess(await createWebhook({ url: webhookUrl, eventTypes: ['task.created'], ...body }, token), 201);
    },

    /** Makes a task change through the API, so the outbox records an event (and fans it out). */
    async recordTaskEvent(token = app().fx.tokens.all, projectId = app().fx.projectId): Promise<string> {
      const task = expectSuccess(await send('POST', '/v1/tasks', { token, body: { projectId, title: 'Event source' } }), 201);
      return (await eventsAbout(app().t.store, task.id))[0]!.payload.id;
    },

    deliveryRows: (subscriptionId: string) =>
      app().t.sql.rows<Record<string, any>>(`SELECT * FROM webhook_deliveries WHERE subscription_id = ? ORDER BY created_at, ${insertionOrderSql(app().t.engineKind)}`, subscriptionId),
  };
}
