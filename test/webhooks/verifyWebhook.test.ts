import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { createEventIdDedupe } from '../../src/webhooks/eventIdDedupe.js';
import { deliveryHeaders, newSigningSecret, signatureHeader } from '../../src/webhooks/signing.js';
import {
  WEBHOOK_VERIFICATION_REASONS,
  WebhookVerificationError,
  parseSignatureHeader,
  verifyWebhook,
  type WebhookVerificationReason,
} from '../../src/webhooks/verifyWebhook.js';
import { ENVELOPE_BODY, KNOWN_V1_A, KNOWN_V1_B, NOW_MS, SECRET_A, SECRET_B, T, envelopeOf } from './fixtures.js';

const at = (ms: number) => () => ms;
const clock = { now: at(NOW_MS) };

function signed(body: string | Buffer, secrets: string[] = [SECRET_A], timestampSeconds = T): Record<string, string> {
  return { 'svc-signature': signatureHeader({ secrets, timestampSeconds, rawBody: body }), 'svc-timestamp': String(timestampSeconds) };
}

function refusal(run: () => unknown): WebhookVerificationReason {
  try {
    run();
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason;
    throw error;
  }
  throw new Error('verification passed');
}

describe('verifyWebhook accepts', () => {
  it('a delivery signed with the secret and returns the typed envelope', () => {
    const event = verifyWebhook(Buffer.from(ENVELOPE_BODY), signed(ENVELOPE_BODY), SECRET_A, clock);
    expect(event).toStrictEqual(JSON.parse(ENVELOPE_BODY));
    expect(event.id).toBe('evt_01HZX3K9Q2T7V');
    expect(event.actor.kind).toBe('USER');
    expect(event.data.object).toMatchObject({ status: 'TODO' });
  });

  it('the fixed known header (a change of the algorithm fails here)', () => {
    const header = `t=1700000000,v1=${KNOWN_V1_A}`;
    expect(verifyWebhook(ENVELOPE_BODY, { 'svc-signature': header }, SECRET_A, clock).id).toBe('evt_01HZX3K9Q2T7V');
    expect(verifyWebhook(ENVELOPE_BODY, { 'svc-signature': `t=1700000000,v1=${KNOWN_V1_B}` }, SECRET_B, clock).type).toBe('task.created');
  });

  it('the full header set of deliveryHeaders, with header names in any case', () => {
    const headers = deliveryHeaders({
      eventId: 'evt_01HZX3K9Q2T7V', eventType: 'task.created', deliveryId: 'dlv_1', subscriptionId: 'whk_1',
      secrets: [SECRET_A], timestampSeconds: T, rawBody: ENVELOPE_BODY,
    });
    expect(verifyWebhook(ENVELOPE_BODY, { ...headers }, SECRET_A, clock).id).toBe('evt_01HZX3K9Q2T7V');
    const lowercased = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
    expect(verifyWebhook(ENVELOPE_BODY, lowercased, SECRET_A, clock).id).toBe('evt_01HZX3K9Q2T7V');
  });

  describe('during a rotation (two v1 in the header)', () => {
    const header = signed(ENVELOPE_BODY, [SECRET_B, SECRET_A]);
    it('with only the new secret', () => expect(verifyWebhook(ENVELOPE_BODY, header, SECRET_B, clock).id).toBe('evt_01HZX3K9Q2T7V'));
    it('with only the old secret', () => expect(verifyWebhook(ENVELOPE_BODY, header, SECRET_A, clock).id).toBe('evt_01HZX3K9Q2T7V'));
    it('with both secrets given to the receiver, whichever signed', () => {
      expect(verifyWebhook(ENVELOPE_BODY, signed(ENVELOPE_BODY, [SECRET_A]), [SECRET_B, SECRET_A], clock).id).toBe('evt_01HZX3K9Q2T7V');
      expect(verifyWebhook(ENVELOPE_BODY, signed(ENVELOPE_BODY, [SECRET_B]), [SECRET_A, SECRET_B], clock).id).toBe('evt_01HZX3K9Q2T7V');
    });
  });

  it('t exactly at the tolerance on either side, and a custom tolerance', () => {
    expect(verifyWebhook(ENVELOPE_BODY, signed(ENVELOPE_BODY, [SECRET_A], T - 300), SECRET_A, clock).id).toBeTruthy();
    expect(verifyWebhook(ENVELOPE_BODY, signed(ENVELOPE_BODY, [SECRET_A], T + 300), SECRET_A, clock).id).toBeTruthy();
    expect(verifyWebhook(ENVELOPE_BODY, signed(ENVELOPE_BODY, [SECRET_A], T - 900), SECRET_A, { ...clock, toleranceSec: 900 }).id).toBeTruthy();
  });
});

describe('verifyWebhook refuses, one test per failure mode', () => {
  it('no Svc-Signature header: missing-signature', () => {
    expect(refusal(() => verifyWebhook(ENVELOPE_BODY, {}, SECRET_A, clock))).toBe('missing-signature');
    expect(refusal(() => verifyWebhook(ENVELOPE_BODY, { 'svc-signature': undefined }, SECRET_A, clock))).toBe('missing-signature');
    expect(refusal(() => verifyWebhook(ENVELOPE_BODY, { 'svc-signature': '' }, SECRET_A, clock))).toBe('missing-signature');
  });

  it.each([
    ['no t', `v1=${KNOWN_V1_A}`],
    ['no v1', `t=${T}`],
    ['only an unknown scheme', `t=${T},v0=${KNOWN_V1_A}`],
    ['two t', `t=${T},t=${T},v1=${KNOWN_V1_A}`],
    ['t not seconds', `t=17e8,v1=${KNOWN_V1_A}`],
    ['negative t', `t=-1,v1=${KNOWN_V1_A}`],
    ['uppercase hex', `t=${T},v1=${KNOWN_V1_A.toUpperCase()}`],
    ['short v1', `t=${T},v1=${KNOWN_V1_A.slice(2)}`],
    ['base64 v1', `t=${T},v1=${Buffer.from(KNOWN_V1_A, 'hex').toString('base64')}`],
    ['not key=value', `t=${T},${KNOWN_V1_A}`],
    ['garbage', 'Bearer abc'],
  ])('bad format (%s): malformed-signature', (_, header) => {
    expect(refusal(() => verifyWebhook(ENVELOPE_BODY, { 'svc-signature': header }, SECRET_A, clock))).toBe('malformed-signature');
  });

  it('Svc-Timestamp that differs from t: malformed-signature', () => {
    const headers = { ...signed(ENVELOPE_BODY), 'svc-timestamp': String(T + 1) };
    expect(refusal(() => verifyWebhook(ENVELOPE_BODY, headers, SECRET_A, clock))).toBe('malformed-signature');
  });

  it('Svc-Signature sent twice: malformed-signature', () => {
    const header = signed(ENVELOPE_BODY)['svc-signature']!;
    expect(refusal(() => verifyWebhook(ENVELOPE_BODY, { 'svc-signature': [header, header] }, SECRET_A, clock))).toBe('malformed-signature');
    expect(verifyWebhook(ENVELOPE_BODY, { 'svc-signature': [header] }, SECRET_A, clock).id).toBe('evt_01HZX3K9Q2T7V');
  });

  it('wrong secret: no-matching-signature', () => {
    expect(refusal(() => verifyWebhook(ENVELOPE_BODY, signed(ENVELOPE_BODY), SECRET_B, clock))).toBe('no-matching-signature');
    expect(refusal(() => verifyWebhook(ENVELOPE_BODY, signed(ENVELOPE_BODY), newSigningSecret(), clock))).toBe('no-matching-signature');
  });

  it('tampered body: no-matching-signature', () => {
    const tampered = ENVELOPE_BODY.replace('"TODO"', '"DONE"');
    expect(tampered).not.toBe(ENVELOPE_BODY);
    expect(refusal(() => verifyWebhook(tampered, signed(ENVELOPE_BODY), SECRET_A, clock))).toBe('no-matching-signature');
  });

  it('tampered t (signature kept, t moved): no-matching-signature', () => {
    const header = `t=${T + 1},v1=${KNOWN_V1_A}`;
    expect(refusal(() => verifyWebhook(ENVELOPE_BODY, { 'svc-signature': header }, SECRET_A, clock))).toBe('no-matching-signature');
  });

  it('re-serialized JSON (same data, other bytes): no-matching-signature', () => {
    const reserialized = JSON.stringify(JSON.parse(ENVELOPE_BODY), null, 2);
    expect(JSON.parse(reserialized)).toStrictEqual(JSON.parse(ENVELOPE_BODY));
    expect(refusal(() => verifyWebhook(reserialized, signed(ENVELOPE_BODY), SECRET_A, clock))).toBe('no-matching-signature');
    // Key order changed, no whitespace change.
    const { id, ...rest } = JSON.parse(ENVELOPE_BODY) as Record<string, unknown>;
    expect(refusal(() => verifyWebhook(JSON.stringify({ ...rest, id }), signed(ENVELOPE_BODY), SECRET_A, clock))).toBe('no-matching-signature');
  });

  it('too old (t more than 300 s before now): timestamp-out-of-tolerance', () => {
    const headers = signed(ENVELOPE_BODY, [SECRET_A], T - 301);
    expect(refusal(() => verifyWebhook(ENVELOPE_BODY, headers, SECRET_A, clock))).toBe('timestamp-out-of-tolerance');
  });

  it('too new (t more than 300 s after now, in the future): timestamp-out-of-tolerance', () => {
    const headers = signed(ENVELOPE_BODY, [SECRET_A], T + 301);
    expect(refusal(() => verifyWebhook(ENVELOPE_BODY, headers, SECRET_A, clock))).toBe('timestamp-out-of-tolerance');
  });

  it('a forged and stale delivery is reported as forged, not as stale', () => {
    const headers = signed(ENVELOPE_BODY, [SECRET_B], T - 10_000);
    expect(refusal(() => verifyWebhook(ENVELOPE_BODY, headers, SECRET_A, clock))).toBe('no-matching-signature');
  });

  it.each([
    ['not JSON', 'not json'],
    ['a JSON array', '[]'],
    ['id without evt_', envelopeOf('tsk_1')],
    ['no type', envelopeOf('evt_1', { type: undefined })],
    ['actor without kind', envelopeOf('evt_1', { actor: { id: 'usr_1' } })],
    ['data without object', envelopeOf('evt_1', { data: {} })],
  ])('a correctly signed body that is not an envelope (%s): malformed-body', (_, body) => {
    expect(refusal(() => verifyWebhook(body, signed(body), SECRET_A, clock))).toBe('malformed-body');
  });

  it('a correctly signed body that is not UTF-8: malformed-body', () => {
    const body = Buffer.from([0x7b, 0xff, 0x7d]);
    expect(refusal(() => verifyWebhook(body, signed(body), SECRET_A, clock))).toBe('malformed-body');
  });

  it('duplicate event id: the dedupe helper answers false the second time', () => {
    const dedupe = createEventIdDedupe({ now: clock.now });
    const receive = (body: string): 'processed' | 'skipped' => {
      const event = verifyWebhook(body, signed(body), SECRET_A, clock);
      return dedupe.firstTime(event.id) ? 'processed' : 'skipped';
    };
    expect(receive(ENVELOPE_BODY)).toBe('processed');
    expect(receive(ENVELOPE_BODY)).toBe('skipped');
    // A retry is signed anew (fresh t) but keeps the event id.
    const retry = signed(ENVELOPE_BODY, [SECRET_A], T + 30);
    expect(dedupe.firstTime(verifyWebhook(ENVELOPE_BODY, retry, SECRET_A, { now: at(NOW_MS + 30_000) }).id)).toBe(false);
    expect(receive(envelopeOf('evt_other'))).toBe('processed');
  });

  it('every reason is in the closed set, and the error carries it', () => {
    const error = new WebhookVerificationError('no-matching-signature', 'x');
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('WebhookVerificationError');
    expect(WEBHOOK_VERIFICATION_REASONS).toStrictEqual([
      'missing-signature', 'malformed-signature', 'timestamp-out-of-tolerance', 'no-matching-signature', 'malformed-body',
    ]);
  });

  it('refuses to run without a secret or with a tolerance that is not positive (programming errors, not refusals)', () => {
    expect(() => verifyWebhook(ENVELOPE_BODY, signed(ENVELOPE_BODY), [], clock)).toThrow(TypeError);
    expect(() => verifyWebhook(ENVELOPE_BODY, signed(ENVELOPE_BODY), '', clock)).toThrow(TypeError);
    expect(() => verifyWebhook(ENVELOPE_BODY, signed(ENVELOPE_BODY), SECRET_A, { ...clock, toleranceSec: 0 })).toThrow(RangeError);
  });
});

describe('parseSignatureHeader', () => {
  it('parses apart from verifying: t and every v1, other schemes skipped, spaces after commas tolerated', () => {
    expect(parseSignatureHeader(`t=${T},v1=${KNOWN_V1_B},v0=abc,v1=${KNOWN_V1_A}`)).toStrictEqual({
      timestampSeconds: T,
      signatures: [KNOWN_V1_B, KNOWN_V1_A],
    });
    expect(parseSignatureHeader(`t=${T}, v1=${KNOWN_V1_A}`).signatures).toStrictEqual([KNOWN_V1_A]);
  });

  it('throws WebhookVerificationError with malformed-signature', () => {
    expect(() => parseSignatureHeader('t=1')).toThrow(WebhookVerificationError);
    expect(refusal(() => parseSignatureHeader('t=1'))).toBe('malformed-signature');
  });
});

describe('interoperability with an independent implementation (stripe-node)', () => {
  it('Stripe.webhooks.constructEvent accepts a header made by signatureHeader', () => {
    const header = signatureHeader({ secrets: [SECRET_A], timestampSeconds: T, rawBody: ENVELOPE_BODY });
    const event = Stripe.webhooks.constructEvent(Buffer.from(ENVELOPE_BODY), header, SECRET_A, 300, undefined, NOW_MS) as unknown as { id: string };
    expect(event.id).toBe('evt_01HZX3K9Q2T7V');
  });

  it('Stripe accepts either secret of a rotation header, and refuses a tampered body', () => {
    const header = signatureHeader({ secrets: [SECRET_B, SECRET_A], timestampSeconds: T, rawBody: ENVELOPE_BODY });
    for (const secret of [SECRET_A, SECRET_B]) {
      expect(Stripe.webhooks.signature!.verifyHeader(ENVELOPE_BODY, header, secret, 300, undefined, NOW_MS)).toBe(true);
    }
    const tampered = ENVELOPE_BODY.replace('"TODO"', '"DONE"');
    expect(() => Stripe.webhooks.constructEvent(tampered, header, SECRET_A, 300, undefined, NOW_MS)).toThrow(Stripe.errors.StripeSignatureVerificationError);
  });

  it('Stripe accepts deliveries with a real clock too (no receivedAt)', () => {
    const secret = newSigningSecret();
    const body = envelopeOf('evt_live');
    const header = signatureHeader({ secrets: [secret], timestampSeconds: Math.floor(Date.now() / 1000), rawBody: body });
    expect((Stripe.webhooks.constructEvent(body, header, secret, 300) as unknown as { id: string }).id).toBe('evt_live');
  });

  it('verifyWebhook accepts a header made by Stripe.webhooks.generateTestHeaderString', () => {
    const header = Stripe.webhooks.generateTestHeaderString({ payload: ENVELOPE_BODY, secret: SECRET_A, timestamp: T });
    expect(header).toBe(`t=${T},v1=${KNOWN_V1_A}`);
    expect(verifyWebhook(ENVELOPE_BODY, { 'Svc-Signature': header }, SECRET_A, clock).id).toBe('evt_01HZX3K9Q2T7V');
    expect(refusal(() => verifyWebhook(ENVELOPE_BODY, { 'Svc-Signature': header }, SECRET_B, clock))).toBe('no-matching-signature');
  });
});
