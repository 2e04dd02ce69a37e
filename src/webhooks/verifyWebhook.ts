import { timingSafeEqual } from 'node:crypto';
import type { components } from '../../generated/work-platform/types.js';
import { computeV1Signature } from './signing.js';

/**
 * Receiver side: what a subscriber runs on each delivery, before anything else reads the body.
 *
 *   const event = verifyWebhook(req.body, req.headers, process.env.WEBHOOK_SECRET);
 *
 * `req.body` must be the raw bytes (e.g. `express.raw({ type: 'application/json' })`): parsing and
 * re-serializing JSON changes the bytes and the signature no longer matches.
 */

export const DEFAULT_TOLERANCE_SEC = 300;

export const WEBHOOK_VERIFICATION_REASONS = [
  'missing-signature',
  'malformed-signature',
  'timestamp-out-of-tolerance',
  'no-matching-signature',
  'malformed-body',
] as const;
export type WebhookVerificationReason = (typeof WEBHOOK_VERIFICATION_REASONS)[number];

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The delivery envelope (the JSON body of a delivery), as the contract declares it. `id` (`evt_…`)
 * is the same for every attempt and replay of one event: the key to dedupe on.
 */
export type WebhookEnvelope = components['schemas']['WebhookEnvelope'];

export interface ParsedSignatureHeader {
  timestampSeconds: number;
  /** Every `v1` value, lowercase hex, in header order. */
  signatures: string[];
}

const V1_PATTERN = /^[0-9a-f]{64}$/;
const TIMESTAMP_PATTERN = /^[0-9]{1,15}$/;

/**
 * Parses `t=<t>,v1=<hex>[,v1=<hex>…]` without verifying anything. Items of other schemes (`v0=`, a
 * future `v2=`) are skipped so that a sender can add one; exactly one `t` and at least one
 * well-formed `v1` are required.
 */
export function parseSignatureHeader(header: string): ParsedSignatureHeader {
  let timestamp: string | undefined;
  const signatures: string[] = [];
  for (const item of header.split(',')) {
    const separator = item.indexOf('=');
    if (separator <= 0) throw new WebhookVerificationError('malformed-signature', `signature header item ${JSON.stringify(item.trim())} is not key=value`);
    const key = item.slice(0, separator).trim();
    const value = item.slice(separator + 1).trim();
    if (key === 't') {
      if (timestamp !== undefined) throw new WebhookVerificationError('malformed-signature', 'signature header has more than one t');
      if (!TIMESTAMP_PATTERN.test(value)) throw new WebhookVerificationError('malformed-signature', 'signature header t is not unix seconds');
      timestamp = value;
    } else if (key === 'v1') {
      if (!V1_PATTERN.test(value)) throw new WebhookVerificationError('malformed-signature', 'signature header v1 is not 64 lowercase hexadecimal characters');
      signatures.push(value);
    }
  }
  if (timestamp === undefined) throw new WebhookVerificationError('malformed-signature', 'signature header has no t');
  if (signatures.length === 0) throw new WebhookVerificationError('malformed-signature', 'signature header has no v1');
  return { timestampSeconds: Number(timestamp), signatures };
}

type IncomingHeaders = Record<string, string | string[] | undefined>;

// Node lowercases incoming header names; other sources (fetch Headers copied into an object, tests) may not.
function headerValue(headers: IncomingHeaders, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== wanted || value === undefined) continue;
    if (typeof value === 'string') return value;
    if (value.length === 1) return value[0];
    // The header sent twice is ambiguous: refuse rather than pick one.
    throw new WebhookVerificationError('malformed-signature', `${name} header appears ${value.length} times`);
  }
  return undefined;
}

function toBytes(rawBody: Uint8Array | string): Uint8Array {
  return typeof rawBody === 'string' ? new TextEncoder().encode(rawBody) : rawBody;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isText = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

function parseEnvelope(body: Uint8Array): WebhookEnvelope {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch {
    throw new WebhookVerificationError('malformed-body', 'body is not UTF-8 JSON');
  }
  if (!isObject(parsed)) throw new WebhookVerificationError('malformed-body', 'body is not a JSON object');
  const { id, type, apiVersion, createdAt, tenantId, actor, data } = parsed;
  if (!isText(id) || !id.startsWith('evt_')) throw new WebhookVerificationError('malformed-body', 'envelope id is not an evt_ id');
  for (const [member, value] of Object.entries({ type, apiVersion, createdAt, tenantId })) {
    if (!isText(value)) throw new WebhookVerificationError('malformed-body', `envelope ${member} is not a string`);
  }
  if (!isObject(actor) || !isText(actor.id) || !isText(actor.kind)) throw new WebhookVerificationError('malformed-body', 'envelope actor needs id and kind');
  if (!isObject(data) || !isObject(data.object)) throw new WebhookVerificationError('malformed-body', 'envelope data needs an object');
  return parsed as WebhookEnvelope;
}

export interface VerifyWebhookOptions {
  /** Largest allowed distance, in seconds, between `t` and `now()`, in either direction. */
  toleranceSec?: number;
  /** Milliseconds since the epoch. */
  now?: () => number;
}

/**
 * Verifies one delivery and returns its envelope, or throws {@link WebhookVerificationError}.
 * Accepts when any `v1` of `Svc-Signature` matches any of `secrets` (pass both during a rotation),
 * and when `t` is within `toleranceSec` of `now()` in either direction. The Svc-Event-Id header
 * is not signed: dedupe on the returned envelope's `id`.
 */
export function verifyWebhook(
  // Uint8Array, not Buffer (a Buffer is one): the client package's declarations compile without @types/node.
  rawBody: Uint8Array | string,
  headers: IncomingHeaders,
  secrets: string | string[],
  { toleranceSec = DEFAULT_TOLERANCE_SEC, now = Date.now }: VerifyWebhookOptions = {},
): WebhookEnvelope {
  const secretList = typeof secrets === 'string' ? [secrets] : secrets;
  if (secretList.length === 0 || secretList.some((secret) => typeof secret !== 'string' || secret.length === 0)) {
    throw new TypeError('verifyWebhook needs at least one non-empty signing secret');
  }
  if (!(Number.isFinite(toleranceSec) && toleranceSec > 0)) throw new RangeError('toleranceSec must be a positive number of seconds');

  const header = headerValue(headers, 'Svc-Signature');
  if (header === undefined || header.trim() === '') throw new WebhookVerificationError('missing-signature', 'no Svc-Signature header');
  const { timestampSeconds, signatures } = parseSignatureHeader(header);
  const timestampHeader = headerValue(headers, 'Svc-Timestamp');
  if (timestampHeader !== undefined && timestampHeader.trim() !== String(timestampSeconds)) {
    throw new WebhookVerificationError('malformed-signature', 'Svc-Timestamp differs from the t of Svc-Signature');
  }

  const body = toBytes(rawBody);
  const received = signatures.map((hex) => Buffer.from(hex, 'hex'));
  let matched = false;
  for (const secret of secretList) {
    const expected = Buffer.from(computeV1Signature(secret, timestampSeconds, body), 'hex');
    // Every candidate is 32 bytes (checked by the parser), so timingSafeEqual never sees unequal lengths.
    for (const candidate of received) matched = timingSafeEqual(expected, candidate) || matched;
  }
  if (!matched) throw new WebhookVerificationError('no-matching-signature', 'no v1 signature matches a given secret');

  // Checked after the signature, so a stale but authentic delivery is told apart from a forged one.
  const skewSeconds = Math.abs(now() / 1000 - timestampSeconds);
  if (!(skewSeconds <= toleranceSec)) {
    throw new WebhookVerificationError('timestamp-out-of-tolerance', `t is ${Math.round(skewSeconds)} s away from now, more than ${toleranceSec} s`);
  }
  return parseEnvelope(body);
}
