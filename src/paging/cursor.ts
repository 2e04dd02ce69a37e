import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { acceptedKeys, fixedKeyRing, type KeyRing, type RingKey } from '../auth/keyRings.js';
import { ServiceError } from '../serviceError.js';

/** Where a list stopped: the listing it belongs to and the last row's sort key and id. */
export interface CursorPayload {
  /** The listed collection, e.g. `tasks` or `projects`. */
  resource: string;
  workspaceId: string;
  sort: string;
  order: 'asc' | 'desc';
  /** The last row's sort key; null when that row has no value in the sort column. */
  key: string | number | null;
  /** The last row's id, the tie-breaker. */
  id: string;
}

/** What a cursor must have been issued for to be accepted. */
export type CursorBinding = Pick<CursorPayload, 'resource' | 'workspaceId' | 'sort' | 'order'>;

export interface CursorCodec {
  encode(payload: CursorPayload): string;
  /** The id of the key `encode` signs with now: what is kept encoded (a list page) is kept per signing key. */
  signingKeyId(): string;
  /** Throws `CursorError` when the text is not a cursor this codec issued for `expected`. */
  decode(text: string, expected: CursorBinding): CursorPayload;
}

/**
 * `unreadable`: not a cursor this server issued with its current secret (or altered since);
 * `mismatch`: a genuine cursor, issued for another listing (resource, workspace, sort or order).
 */
export type CursorErrorReason = 'unreadable' | 'mismatch';

export class CursorError extends ServiceError {
  override readonly name = 'CursorError';
  readonly kind = 'invalid-cursor';

  constructor(
    readonly reason: CursorErrorReason,
    message: string,
  ) {
    super(message);
  }
}

/** Longest cursor text accepted (the `cursor` query parameter's `maxLength`). */
// Room for the longest sort key the contract allows: 200 characters of four-byte or JSON-escaped text.
export const MAX_CURSOR_LENGTH = 4096;
/** Shortest accepted secret: the generated one is 32 random bytes, like an HS256 key. */
export const MIN_CURSOR_SECRET_BYTES = 32;

const CURSOR_VERSION = 1;
const MAC_BYTES = 32;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** The signed JSON, with short member names to keep cursors short. */
interface WirePayload {
  v: number;
  r: string;
  w: string;
  s: string;
  o: 'asc' | 'desc';
  k: string | number | null;
  i: string;
}

/** How long a replaced cursor key still verifies the cursors it signed, by default: a day. */
export const defaultCursorKeyGraceMs = 24 * 60 * 60 * 1000;

export interface CursorKeyOptions {
  /** How long after a rotation the replaced key still verifies cursors. */
  graceMs?: number;
  now?: () => number;
}

/**
 * Cursors are `base64url(JSON) "." base64url(HMAC-SHA256(JSON bytes))`, signed with the newest
 * key of the ring and checked against every key it still accepts (two at most during a rotation's
 * grace period), so that their form, which the contract's pattern fixes, is the same before and
 * after a rotation. The MAC makes them tamper-evident (a client cannot forge a position or reuse one
 * across workspaces); the JSON is readable by anyone, so it carries nothing that the caller may
 * not see: the last row's sort key and id, which the caller has just received.
 */
export function createCursorCodec(secret: Uint8Array | KeyRing, options: CursorKeyOptions = {}): CursorCodec {
  const ring = secret instanceof Uint8Array ? fixedKeyRing(secret) : secret;
  const graceMs = options.graceMs ?? defaultCursorKeyGraceMs;
  const now = options.now ?? Date.now;
  // A KeyObject holds its own copy: later changes to the caller's array do not alter the key.
  const keyObjects = new WeakMap<RingKey, KeyObject>();
  const keyObject = (key: RingKey) => {
    let found = keyObjects.get(key);
    if (!found) {
      if (!(key.key instanceof Uint8Array) || key.key.length < MIN_CURSOR_SECRET_BYTES) {
        throw new TypeError(`the cursor secret must be at least ${MIN_CURSOR_SECRET_BYTES} bytes`);
      }
      found = createSecretKey(Buffer.from(key.key));
      keyObjects.set(key, found);
    }
    return found;
  };
  keyObject(ring.newest());
  /** The keys a cursor may have been signed with: every key the ring still accepts, newest first. */
  const verifyingKeys = () => acceptedKeys(ring, now(), graceMs).map(keyObject);
  const macMatches = (json: Buffer, givenMac: Buffer) => {
    if (verifyingKeys().some((key) => timingSafeEqual(mac(key, json), givenMac))) return true;
    // Signed by another process with a key this one has not read yet?
    ring.refresh();
    return verifyingKeys().some((key) => timingSafeEqual(mac(key, json), givenMac));
  };

  return {
    encode(payload) {
      assertEncodable(payload);
      const wire: WirePayload = {
        v: CURSOR_VERSION,
        r: payload.resource,
        w: payload.workspaceId,
        s: payload.sort,
        o: payload.order,
        k: payload.key,
        i: payload.id,
      };
      const json = Buffer.from(JSON.stringify(wire), 'utf8');
      const signing = ring.newest();
      const text = `${json.toString('base64url')}.${mac(keyObject(signing), json).toString('base64url')}`;
      if (text.length > MAX_CURSOR_LENGTH) {
        // Only a sort key of hundreds of control characters or lone surrogates gets here.
        throw new RangeError(`the cursor would be ${text.length} characters, more than ${MAX_CURSOR_LENGTH}`);
      }
      return text;
    },

    signingKeyId: () => ring.newest().id,

    decode(text, expected) {
      const payload = readPayload(macMatches, text);
      for (const member of ['resource', 'workspaceId', 'sort', 'order'] as const) {
        if (payload[member] !== expected[member]) {
          throw new CursorError('mismatch', `the cursor was issued for another ${MEMBER_NOUN[member]}`);
        }
      }
      return payload;
    },
  };
}

const MEMBER_NOUN: Record<keyof CursorBinding, string> = {
  resource: 'resource',
  workspaceId: 'workspace',
  sort: 'sort',
  order: 'order',
};

function mac(key: KeyObject, bytes: Buffer): Buffer {
  return createHmac('sha256', key).update(bytes).digest();
}

/** Verifies the MAC before looking inside: nothing unauthenticated is parsed. */
function readPayload(macMatches: (json: Buffer, givenMac: Buffer) => boolean, text: unknown): CursorPayload {
  if (typeof text !== 'string' || text.length === 0) throw unreadable('the cursor is empty');
  if (text.length > MAX_CURSOR_LENGTH) throw unreadable(`the cursor is longer than ${MAX_CURSOR_LENGTH} characters`);
  const parts = text.split('.');
  if (parts.length !== 2) throw unreadable('the cursor is not two dot-separated parts');
  const [jsonPart, macPart] = parts as [string, string];
  const json = strictBase64url(jsonPart);
  const givenMac = strictBase64url(macPart);
  if (!json || !givenMac || givenMac.length !== MAC_BYTES) throw unreadable('the cursor is not base64url');
  if (!macMatches(json, givenMac)) throw unreadable('the cursor signature does not match any key this server accepts');

  let wire: unknown;
  try {
    wire = JSON.parse(json.toString('utf8'));
  } catch {
    throw unreadable('the cursor payload is not JSON');
  }
  if (!isRecord(wire) || wire.v !== CURSOR_VERSION) throw unreadable('the cursor version is not supported');
  const payload = {
    resource: wire.r,
    workspaceId: wire.w,
    sort: wire.s,
    order: wire.o,
    key: wire.k,
    id: wire.i,
  };
  if (!isPayload(payload)) throw unreadable('the cursor payload has the wrong shape');
  return payload;
}

/**
 * Decodes only the canonical spelling: Node's decoder skips stray characters and ignores unused
 * trailing bits, which would let several texts stand for the same bytes.
 */
function strictBase64url(part: string): Buffer | undefined {
  if (!BASE64URL.test(part)) return undefined;
  const bytes = Buffer.from(part, 'base64url');
  return bytes.length > 0 && bytes.toString('base64url') === part ? bytes : undefined;
}

function unreadable(message: string): CursorError {
  return new CursorError('unreadable', message);
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isText = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

const isKey = (value: unknown): value is CursorPayload['key'] =>
  value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));

function isPayload(value: Record<string, unknown>): value is Record<string, unknown> & CursorPayload {
  return (
    isText(value.resource) &&
    isText(value.workspaceId) &&
    isText(value.sort) &&
    (value.order === 'asc' || value.order === 'desc') &&
    isKey(value.key) &&
    isText(value.id)
  );
}

/** A programming error, not a client's: the list code passed something that cannot round-trip. */
function assertEncodable(payload: CursorPayload): void {
  if (!isRecord(payload) || !isPayload(payload as unknown as Record<string, unknown>)) {
    throw new TypeError(
      'a cursor payload needs non-empty resource, workspaceId, sort and id, order asc or desc, and a string, finite number or null key',
    );
  }
}
