import { createHmac, randomBytes as cryptoRandomBytes } from 'node:crypto';

/**
 * Sender side of webhook signatures. The scheme is Stripe's `t=…,v1=…` one, so any verifier of that
 * scheme checks our deliveries: `v1` is the lowercase hex HMAC-SHA256 of `<t>.<raw body>`, keyed with
 * the signing secret's UTF-8 bytes (the whole `whsec_…` string, prefix included, is the key).
 */

/** Prefix of every signing secret, so a leaked one is recognizable (secret scanners, logs). */
export const SIGNING_SECRET_PREFIX = 'whsec_';
const SIGNING_SECRET_BYTES = 32;

/** A signing secret as handed out once: the string itself, or the same string's UTF-8 bytes. */
export type SigningSecret = string | Uint8Array;

export const DEFAULT_WEBHOOK_USER_AGENT = 'ContractApiServer-Webhooks/2.0';
/** `<product>/2` or `<product>/2.<minor>…`, optionally followed by comments: the seed asks for version 2. */
const USER_AGENT_PATTERN = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+\/2(\.[0-9A-Za-z-]+)*( .*)?$/;

/** Makes a new signing secret, `whsec_` + 43 base64url characters (32 random bytes, unpadded). */
export function newSigningSecret(randomBytes: (size: number) => Uint8Array = cryptoRandomBytes): string {
  const bytes = randomBytes(SIGNING_SECRET_BYTES);
  if (bytes.length !== SIGNING_SECRET_BYTES) throw new RangeError(`randomBytes(${SIGNING_SECRET_BYTES}) returned ${bytes.length} bytes`);
  return SIGNING_SECRET_PREFIX + Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
}

function keyBytes(secret: SigningSecret): Buffer {
  const key = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : Buffer.from(secret.buffer, secret.byteOffset, secret.byteLength);
  if (key.length === 0) throw new TypeError('a signing secret must not be empty');
  return key;
}

function bodyBytes(rawBody: Uint8Array | string): Buffer {
  if (typeof rawBody === 'string') return Buffer.from(rawBody, 'utf8');
  return Buffer.isBuffer(rawBody) ? rawBody : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
}

function checkTimestamp(timestampSeconds: number): void {
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new RangeError(`timestampSeconds must be a non-negative integer of seconds, got ${timestampSeconds}`);
  }
}

/** The `v1` value for one secret: lowercase hex HMAC-SHA256 over the bytes `<t>.` followed by the raw body bytes. */
export function computeV1Signature(secret: SigningSecret, timestampSeconds: number, rawBody: Uint8Array | string): string {
  checkTimestamp(timestampSeconds);
  return createHmac('sha256', keyBytes(secret))
    .update(`${timestampSeconds}.`, 'utf8')
    .update(bodyBytes(rawBody))
    .digest('hex');
}

export interface SignatureHeaderInput {
  /** Active secrets, current first; during a rotation's overlap the previous one follows. */
  secrets: readonly string[] | readonly Uint8Array[];
  /** When this attempt is signed (every attempt is signed anew when it is sent). */
  timestampSeconds: number;
  /** The exact bytes that are sent as the request body. */
  rawBody: Uint8Array | string;
}

/** `t=<t>,v1=<hex>[,v1=<hex>…]`: one `v1` per active secret, in the order given. */
export function signatureHeader({ secrets, timestampSeconds, rawBody }: SignatureHeaderInput): string {
  if (secrets.length === 0) throw new TypeError('at least one active signing secret is needed');
  checkTimestamp(timestampSeconds);
  const body = bodyBytes(rawBody);
  const signatures = (secrets as readonly SigningSecret[]).map((secret) => `v1=${computeV1Signature(secret, timestampSeconds, body)}`);
  return [`t=${timestampSeconds}`, ...signatures].join(',');
}

export interface DeliveryHeadersInput extends SignatureHeaderInput {
  eventId: string;
  eventType: string;
  deliveryId: string;
  subscriptionId: string;
  /** `<product>/2.x`; defaults to {@link DEFAULT_WEBHOOK_USER_AGENT}. */
  userAgent?: string;
}

/** Exactly the header set of a delivery attempt, in the seed's spelling. */
export interface DeliveryHeaders {
  'content-type': 'application/json';
  'user-agent': string;
  'Svc-Signature': string;
  'Svc-Timestamp': string;
  'Svc-Event-Id': string;
  'Svc-Event-Type': string;
  'Svc-Delivery-Id': string;
  'Svc-Subscription-Id': string;
}

// Header values must not be able to smuggle a second header or an empty value past the sender.
function headerValue(name: string, value: string): string {
  if (value.length === 0 || !/^[\x21-\x7e]+$/.test(value)) {
    throw new TypeError(`${name} must be a non-empty string of visible ASCII characters, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** The headers of one delivery attempt: content-type, user-agent, signature and the Svc-* ids. */
export function deliveryHeaders(input: DeliveryHeadersInput): DeliveryHeaders {
  const userAgent = input.userAgent ?? DEFAULT_WEBHOOK_USER_AGENT;
  if (!USER_AGENT_PATTERN.test(userAgent)) {
    throw new TypeError(`userAgent must be "<product>/2" or "<product>/2.<minor>", got ${JSON.stringify(userAgent)}`);
  }
  if (!input.eventId.startsWith('evt_')) throw new TypeError(`eventId must start with evt_, got ${JSON.stringify(input.eventId)}`);
  return {
    'content-type': 'application/json',
    'user-agent': userAgent,
    'Svc-Signature': signatureHeader(input),
    'Svc-Timestamp': String(input.timestampSeconds),
    'Svc-Event-Id': headerValue('eventId', input.eventId),
    'Svc-Event-Type': headerValue('eventType', input.eventType),
    'Svc-Delivery-Id': headerValue('deliveryId', input.deliveryId),
    'Svc-Subscription-Id': headerValue('subscriptionId', input.subscriptionId),
  };
}
