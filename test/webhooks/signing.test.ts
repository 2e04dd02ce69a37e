import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_WEBHOOK_USER_AGENT,
  computeV1Signature,
  deliveryHeaders,
  newSigningSecret,
  signatureHeader,
} from '../../src/webhooks/signing.js';
import { ENVELOPE_BODY, KNOWN_V1_A, KNOWN_V1_B, SECRET_A, SECRET_B, T } from './fixtures.js';

const hmacHex = (key: string, text: string): string => createHmac('sha256', Buffer.from(key, 'utf8')).update(text, 'utf8').digest('hex');

describe('signatureHeader', () => {
  it('matches the known vector kept as text (a change of the algorithm fails here)', () => {
    expect(signatureHeader({ secrets: [SECRET_A], timestampSeconds: T, rawBody: ENVELOPE_BODY })).toBe(`t=1700000000,v1=${KNOWN_V1_A}`);
  });

  it('is HMAC-SHA256 keyed with the whole secret string (prefix included) over "<t>.<raw body>"', () => {
    const expected = hmacHex(SECRET_A, `${T}.${ENVELOPE_BODY}`);
    expect(expected).toBe(KNOWN_V1_A);
    expect(computeV1Signature(SECRET_A, T, ENVELOPE_BODY)).toBe(expected);
    // Not keyed with the part after the prefix, nor with its decoded bytes.
    expect(expected).not.toBe(hmacHex(SECRET_A.slice('whsec_'.length), `${T}.${ENVELOPE_BODY}`));
  });

  it('puts one v1 per active secret, current first, all with the same t', () => {
    const header = signatureHeader({ secrets: [SECRET_B, SECRET_A], timestampSeconds: T, rawBody: ENVELOPE_BODY });
    expect(header).toBe(`t=${T},v1=${KNOWN_V1_B},v1=${KNOWN_V1_A}`);
    expect(header).toMatch(/^t=\d+(,v1=[0-9a-f]{64})+$/);
  });

  it('signs the same bytes whether the body is a string, a Buffer, and the secret a string or its UTF-8 bytes', () => {
    const fromBuffer = signatureHeader({ secrets: [Buffer.from(SECRET_A, 'utf8')], timestampSeconds: T, rawBody: Buffer.from(ENVELOPE_BODY, 'utf8') });
    expect(fromBuffer).toBe(`t=${T},v1=${KNOWN_V1_A}`);
    const bytes = new TextEncoder().encode(SECRET_A);
    expect(signatureHeader({ secrets: [bytes], timestampSeconds: T, rawBody: ENVELOPE_BODY })).toBe(fromBuffer);
  });

  it('signs non-ASCII bodies as their UTF-8 bytes', () => {
    const body = '{"title":"Café ☕ 🚀"}';
    const expected = createHmac('sha256', SECRET_A).update(Buffer.concat([Buffer.from(`${T}.`), Buffer.from(body, 'utf8')])).digest('hex');
    expect(computeV1Signature(SECRET_A, T, body)).toBe(expected);
    expect(computeV1Signature(SECRET_A, T, Buffer.from(body))).toBe(expected);
  });

  it('changes with the timestamp, the body and the secret', () => {
    const base = computeV1Signature(SECRET_A, T, ENVELOPE_BODY);
    expect(computeV1Signature(SECRET_A, T + 1, ENVELOPE_BODY)).not.toBe(base);
    expect(computeV1Signature(SECRET_A, T, `${ENVELOPE_BODY} `)).not.toBe(base);
    expect(computeV1Signature(SECRET_B, T, ENVELOPE_BODY)).not.toBe(base);
  });

  it('refuses no secret, an empty secret and a timestamp that is not whole seconds', () => {
    expect(() => signatureHeader({ secrets: [], timestampSeconds: T, rawBody: '{}' })).toThrow(TypeError);
    expect(() => signatureHeader({ secrets: [''], timestampSeconds: T, rawBody: '{}' })).toThrow(TypeError);
    expect(() => signatureHeader({ secrets: [SECRET_A], timestampSeconds: T * 1000 + 0.5, rawBody: '{}' })).toThrow(RangeError);
    expect(() => signatureHeader({ secrets: [SECRET_A], timestampSeconds: -1, rawBody: '{}' })).toThrow(RangeError);
  });
});

describe('deliveryHeaders', () => {
  const input = {
    eventId: 'evt_01HZX3K9Q2T7V',
    eventType: 'task.created',
    deliveryId: 'dlv_01',
    subscriptionId: 'whk_01',
    secrets: [SECRET_B, SECRET_A],
    timestampSeconds: T,
    rawBody: ENVELOPE_BODY,
  };

  it('is exactly the seed header set, with Svc-Timestamp equal to t', () => {
    expect(deliveryHeaders(input)).toStrictEqual({
      'content-type': 'application/json',
      'user-agent': DEFAULT_WEBHOOK_USER_AGENT,
      'Svc-Signature': `t=${T},v1=${KNOWN_V1_B},v1=${KNOWN_V1_A}`,
      'Svc-Timestamp': '1700000000',
      'Svc-Event-Id': 'evt_01HZX3K9Q2T7V',
      'Svc-Event-Type': 'task.created',
      'Svc-Delivery-Id': 'dlv_01',
      'Svc-Subscription-Id': 'whk_01',
    });
    expect(DEFAULT_WEBHOOK_USER_AGENT).toMatch(/^[\w.-]+\/2\.\d+$/);
  });

  it('takes a user agent of product name and version 2, and refuses any other version', () => {
    expect(deliveryHeaders({ ...input, userAgent: 'Acme-Hooks/2.3' })['user-agent']).toBe('Acme-Hooks/2.3');
    expect(deliveryHeaders({ ...input, userAgent: 'Acme-Hooks/2' })['user-agent']).toBe('Acme-Hooks/2');
    for (const userAgent of ['Acme-Hooks/1.0', 'Acme-Hooks', 'Acme-Hooks/20.1', '/2.0', '']) {
      expect(() => deliveryHeaders({ ...input, userAgent }), userAgent).toThrow(TypeError);
    }
  });

  it('refuses an event id without evt_ and header values that could split headers', () => {
    expect(() => deliveryHeaders({ ...input, eventId: 'tsk_1' })).toThrow(TypeError);
    expect(() => deliveryHeaders({ ...input, eventType: 'task.created\r\nX-Evil: 1' })).toThrow(TypeError);
    expect(() => deliveryHeaders({ ...input, deliveryId: '' })).toThrow(TypeError);
  });
});

describe('newSigningSecret', () => {
  it('is whsec_ and 43 base64url characters of 32 random bytes', () => {
    const secret = newSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(secret.slice(6), 'base64url')).toHaveLength(32);
    expect(newSigningSecret()).not.toBe(secret);
  });

  it('uses the injected randomness', () => {
    const counting = (size: number): Uint8Array => Uint8Array.from({ length: size }, (_, i) => i + 1);
    expect(newSigningSecret(counting)).toBe(SECRET_A);
    expect(() => newSigningSecret(() => new Uint8Array(16))).toThrow(RangeError);
  });
});
