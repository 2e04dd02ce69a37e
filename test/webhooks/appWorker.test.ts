import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { loadSealingBox } from '../../src/auth/secretBox.js';
import { verifyWebhook } from '../../src/webhooks/verifyWebhook.js';
import { memoryLogger } from '../support/testApp.js';
import { liftCallLimits } from '../support/workPlatform.js';
import { makeToken } from '../store/workPlatformFactories.js';
import { deliveriesOf, insertSubscription, makeDeliveryFixture, startReceiver, waitFor, type DeliveryFixture, type Receiver } from './deliveryFixtures.js';

/** The worker inside the server (WEBHOOK_WORKER=on): woken by the API's commit, stopped by close(). */

let fx: DeliveryFixture;
let receiver: Receiver;
let app: RunningApp | undefined;
afterEach(async () => {
  await app?.close();
  await receiver?.close();
  fx?.cleanup();
});

async function start(worker: 'on' | 'off', logLines: string[]) {
  fx = await makeDeliveryFixture();
  receiver = await startReceiver();
  await liftCallLimits(fx.db, fx.workspace.workspaceId);
  const config = loadConfig({
    DATABASE_PATH: fx.path,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_REQUESTS: 'off',
    WEBHOOK_WORKER: worker,
    WEBHOOK_ALLOW_LOOPBACK: '1',
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64url'),
  });
  const subscription = insertSubscription(fx.db, { workspaceId: fx.workspace.workspaceId, url: receiver.url, eventTypes: ['task.created'] }, loadSealingBox(config));
  // No retry sweep: a delivery can only come from the wake-up.
  app = await startApp(config, { logger: memoryLogger(logLines), db: fx.db, webhookDelivery: { retrySweep: false } });
  const { token } = await makeToken(fx.db, fx.workspace, { scopes: ['tasks:write', 'webhooks:manage'] });
  const createTask = () =>
    fetch(`${app!.url}/v1/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ projectId: fx.projectId, title: 'From the API' }),
    });
  const replay = (eventId: string) =>
    fetch(`${app!.url}/v1/webhooks/${subscription.id}/replays`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ eventId }),
    });
  return { subscription, createTask, replay };
}

describe('the in-process worker', () => {
  it('delivers right after the API commits, and close() stops it', async () => {
    const logLines: string[] = [];
    const { subscription, createTask } = await start('on', logLines);
    expect(app!.webhookWorker).toBeDefined();
    expect((await createTask()).status).toBe(201);
    await waitFor(() => deliveriesOf(fx.db, subscription.id)[0]?.status === 'SUCCEEDED', 'the delivery');
    expect(verifyWebhook(receiver.received[0]!.body, receiver.received[0]!.headers, subscription.secret).type).toBe('task.created');
    await app!.close();
    app = undefined;
    expect(logLines.some((line) => line.includes('webhook worker stopped'))).toBe(true);
  });

  it('delivers a replay right after it is queued, with the same event id and a new delivery id', async () => {
    const { subscription, createTask, replay } = await start('on', []);
    expect((await createTask()).status).toBe(201);
    await waitFor(() => receiver.received.length === 1, 'the first delivery');
    const first = verifyWebhook(receiver.received[0]!.body, receiver.received[0]!.headers, subscription.secret);
    expect((await replay(first.id)).status).toBe(202);
    await waitFor(() => receiver.received.length === 2, 'the replay');
    const [original, replayed] = receiver.received.map((delivery) => delivery.headers);
    expect(replayed!['svc-event-id']).toBe(first.id);
    expect(replayed!['svc-delivery-id']).not.toBe(original!['svc-delivery-id']);
  });

  it('refuses to start, naming WEBHOOK_SECRET_KEY, when the key cannot open the stored secrets', async () => {
    fx = await makeDeliveryFixture();
    receiver = await startReceiver();
    const sealedWith = loadConfig({ DATABASE_PATH: fx.path, WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64url') });
    insertSubscription(fx.db, { workspaceId: fx.workspace.workspaceId, url: receiver.url }, loadSealingBox(sealedWith));
    const config = (worker: 'on' | 'off') =>
      loadConfig({
        DATABASE_PATH: fx.path,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_REQUESTS: 'off',
        WEBHOOK_WORKER: worker,
        WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64url'),
      });
    await expect(startApp(config('on'), { logger: memoryLogger([]), db: fx.db })).rejects.toThrow(/WEBHOOK_SECRET_KEY cannot open the stored webhook signing secrets/);
    // Without the worker the server starts (the key matters to rotation and new subscriptions only).
    app = await startApp(config('off'), { logger: memoryLogger([]), db: fx.db });
  });

  it('WEBHOOK_WORKER=off queues deliveries without sending them', async () => {
    const { subscription, createTask } = await start('off', []);
    expect(app!.webhookWorker).toBeUndefined();
    expect((await createTask()).status).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(deliveriesOf(fx.db, subscription.id).map((d) => d.status)).toEqual(['PENDING']);
    expect(receiver.received).toEqual([]);
  });
});
