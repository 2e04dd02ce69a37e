import { describe, expect, it } from 'vitest';
import type { SecretBox } from '../../src/auth/secretBox.js';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { OVERLAP_MS, webhookCalls, webhookSecretBoxOf, webhookUrl as url } from '../support/webhookCalls.js';
import { expectProblem, expectSuccess } from '../support/workPlatform.js';

// The server's clock is injected, so that times in answers are exact and move only when a test moves them.
let clock = Math.max(Date.UTC(2026, 10, 23, 9, 41, 0), Date.now());
let t: TestApp;
let fx: WorkPlatformFixture;
let box: SecretBox;
useTestApp(({ workPlatform: app }) => {
  ({ t, fx } = app);
  box = webhookSecretBoxOf(t);
}, { liftCallLimits: true, now: () => clock });

const { createWebhook, rotate, getWebhook, newWebhook } = webhookCalls(() => ({ t, client: t.workPlatformClient, fx }), () => clock);

describe('POST /v1/webhooks/{webhookId}/rotate-key', () => {
  it('rotates twice: exact overlap of 58 h 45 min, the older previous secret dropped, the overlap ending on time', async () => {
    const webhook = await newWebhook();
    const sealed = async () => (await t.sql.row<{ current: string; previous: string | null }>('SELECT sealed_secret AS current, sealed_previous_secret AS previous FROM webhook_subscriptions WHERE id = ?', webhook.id))!;
    clock += 60_000;
    const firstAt = clock;
    const first = expectSuccess(await rotate(webhook.id), 200);
    expect(first).toEqual({
      id: webhook.id,
      signingKeyVersion: 2,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
      previousSigningKeyExpiresAt: new Date(firstAt + OVERLAP_MS).toISOString(),
    });
    expect(first.secret).not.toBe(webhook.secret);
    expect(box.open((await sealed()).current, webhook.id)).toBe(first.secret);
    expect(box.open((await sealed()).previous!, webhook.id)).toBe(webhook.secret);
    const afterFirst = await getWebhook(webhook.id);
    expect(expectSuccess(afterFirst, 200)).toMatchObject({ signingKeyVersion: 2, previousSigningKeyExpiresAt: first.previousSigningKeyExpiresAt, version: 2 });
    expect(afterFirst.headers['etag']).toBe('"2"');

    clock += 3_600_000;
    const second = expectSuccess(await rotate(webhook.id), 200);
    expect(second).toMatchObject({ signingKeyVersion: 3, previousSigningKeyExpiresAt: new Date(clock + OVERLAP_MS).toISOString() });
    expect(box.open((await sealed()).current, webhook.id)).toBe(second.secret);
    expect(box.open((await sealed()).previous!, webhook.id)).toBe(first.secret);

    clock += OVERLAP_MS - 1;
    expect(expectSuccess(await getWebhook(webhook.id), 200).previousSigningKeyExpiresAt).toBe(second.previousSigningKeyExpiresAt);
    clock += 1;
    expect(expectSuccess(await getWebhook(webhook.id), 200)).toMatchObject({ previousSigningKeyExpiresAt: null, signingKeyVersion: 3, version: 3 });
  });

  it('answers 404 for an unknown or foreign subscription', async () => {
    expectProblem(await rotate('whk_ZZZZZZZZZZZZZZZZZZZZ'), 404, 'not-found', 'webhook-not-found');
    expectProblem(await rotate(fx.otherWorkspace.webhookId), 404, 'not-found', 'webhook-not-found');
  });
});

describe('signing secrets at rest', () => {

  it('are never written in plaintext, not even in the stored idempotent answers, which still replay verbatim', async () => {
    const key = `create-${clock}`;
    const created = await createWebhook({ url, eventTypes: ['task.created'] }, undefined, { 'idempotency-key': key });
    const webhook = expectSuccess(created, 201);
    const createdAgain = await createWebhook({ url, eventTypes: ['task.created'] }, undefined, { 'idempotency-key': key });
    expect(createdAgain.status).toBe(201);
    expect(createdAgain.headers['idempotent-replayed']).toBe('true');
    expect(createdAgain.text).toBe(created.text);
    expect(createdAgain.headers['location']).toBe(created.headers['location']);

    const rotateKey = `rotate-${clock}`;
    const rotated = await rotate(webhook.id, { 'idempotency-key': rotateKey });
    const rotation = expectSuccess(rotated, 200);
    const rotatedAgain = await rotate(webhook.id, { 'idempotency-key': rotateKey });
    expect(rotatedAgain.headers['idempotent-replayed']).toBe('true');
    expect(rotatedAgain.text).toBe(rotated.text);
    expect(expectSuccess(await getWebhook(webhook.id), 200).signingKeyVersion).toBe(2);
    // The same key for another subscription's rotation is refused, not answered with this secret.
    const another = await newWebhook();
    const reused = expectProblem(await rotate(another.id, { 'idempotency-key': rotateKey }), 409, 'conflict', 'idempotency-key-reused');
    expect(JSON.stringify(reused)).not.toContain(rotation.secret);

    expect((await t.sql.value('SELECT count(*) FROM idempotency_keys WHERE key IN (?, ?)', key, rotateKey))).toBe(2);
    const bytes = await t.sql.storedBytes();
    expect(bytes.length).toBeGreaterThan(0);
    for (const secret of [webhook.secret, rotation.secret, another.secret, fx.webhook.secret]) {
      expect(bytes.includes(Buffer.from(secret, 'utf8'))).toBe(false);
      expect(bytes.includes(Buffer.from(secret.slice('whsec_'.length), 'utf8'))).toBe(false);
    }
    const log = t.logLines.join('\n');
    for (const secret of [webhook.secret, rotation.secret, another.secret, fx.webhook.secret]) expect(log).not.toContain(secret.slice('whsec_'.length));
  });
});
