import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookReceiver, RECEIVER_PATH } from '../../scripts/webhook-receiver.js';
import { deliveryHeaders } from '../../src/webhooks/signing.js';
import type { WebhookEnvelope } from '../../src/webhooks/verifyWebhook.js';
import { envelopeOf, NOW_MS, SECRET_A, SECRET_B, T } from './fixtures.js';

// The receiver example of docs/webhooks.md, run for real over HTTP with deliveries signed by the sender's code.
describe('the example webhook receiver (scripts/webhook-receiver.ts)', () => {
  const received: WebhookEnvelope[] = [];
  const refused: string[] = [];
  let server: Server;
  let url: string;

  beforeAll(async () => {
    const app = createWebhookReceiver({
      secrets: [SECRET_A],
      onEvent: (event) => received.push(event),
      onRefused: (reason) => refused.push(reason),
      now: () => NOW_MS,
    });
    server = await new Promise<Server>((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${RECEIVER_PATH}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const deliver = (body: string, secrets: string[], eventId = 'evt_receiver1') =>
    fetch(url, {
      method: 'POST',
      headers: { ...deliveryHeaders({ secrets, timestampSeconds: T, rawBody: body, eventId, eventType: 'task.completed', deliveryId: 'dlv_1', subscriptionId: 'whk_1' }) },
      body,
    });

  it('accepts a signed delivery once and skips the same event id afterwards', async () => {
    const body = envelopeOf('evt_receiver1');
    expect((await deliver(body, [SECRET_A])).status).toBe(204);
    expect((await deliver(body, [SECRET_B, SECRET_A])).status).toBe(204);
    expect(received.map((event) => event.id)).toEqual(['evt_receiver1']);
  });

  it('refuses a delivery signed with another secret, with the verifier reason', async () => {
    const response = await deliver(envelopeOf('evt_receiver2'), [SECRET_B]);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'no-matching-signature' });
    expect(refused).toEqual(['no-matching-signature']);
    expect(received.map((event) => event.id)).not.toContain('evt_receiver2');
  });
});
