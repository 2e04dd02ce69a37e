import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  createCursorCodec,
  CursorError,
  MAX_CURSOR_LENGTH,
  type CursorBinding,
  type CursorErrorReason,
  type CursorPayload,
} from '../../src/paging/cursor.js';

const secret = new Uint8Array(32).fill(7);
const codec = createCursorCodec(secret);

function makePayload(overrides: Partial<CursorPayload> = {}): CursorPayload {
  return {
    resource: 'tasks',
    workspaceId: 'ten_AAAAAAAAAAAAAAAAAAAA',
    sort: 'createdAt',
    order: 'desc',
    key: 1795426860000,
    id: 'tsk_0000000000000000000001',
    ...overrides,
  };
}

const bindingOf = ({ resource, workspaceId, sort, order }: CursorPayload): CursorBinding => ({
  resource,
  workspaceId,
  sort,
  order,
});

function decodeError(text: string, binding: CursorBinding = bindingOf(makePayload())): CursorError {
  try {
    codec.decode(text, binding);
  } catch (error) {
    expect(error).toBeInstanceOf(CursorError);
    return error as CursorError;
  }
  throw new Error(`decode accepted ${JSON.stringify(text)}`);
}

function expectRejected(text: string, reason: CursorErrorReason, binding?: CursorBinding): void {
  expect(decodeError(text, binding).reason).toBe(reason);
}

/** A cursor with a valid MAC over any JSON text: what a holder of the secret could issue. */
function signRaw(json: string, key: Uint8Array = secret): string {
  const bytes = Buffer.from(json, 'utf8');
  const mac = createHmac('sha256', key).update(bytes).digest();
  return `${bytes.toString('base64url')}.${mac.toString('base64url')}`;
}

function flipByte(part: string, index: number): string {
  const bytes = Buffer.from(part, 'base64url');
  bytes[index] = bytes[index]! ^ 0x01;
  return bytes.toString('base64url');
}

describe('cursor codec: round trip', () => {
  it.each([
    ['an integer (timestamp ms)', 1795426860000],
    ['a small integer (priority rank)', 3],
    ['zero', 0],
    ['a negative number', -42],
    ['a fraction', 0.5],
    ['a string', 'Draft the launch announcement'],
    ['an empty string', ''],
    ['a string with quotes, backslashes, newlines and a dot', 'a "b" \\ c\nd.e'],
    ['a non-ASCII string', 'Überarbeitung — 日本語 🚀'],
    ['a 200-character title of three-byte characters', '日'.repeat(200)],
    ['null (no value in the sort column)', null],
  ])('keeps %s', (_, key) => {
    const payload = makePayload({ key });
    const text = codec.encode(payload);
    expect(codec.decode(text, bindingOf(payload))).toEqual(payload);
  });

  it('keeps every member for both orders and other resources', () => {
    for (const payload of [
      makePayload({ order: 'asc' }),
      makePayload({ resource: 'projects', sort: 'name', key: 'Website relaunch', id: 'prj_demoWebsiteRelaunch' }),
    ]) {
      expect(codec.decode(codec.encode(payload), bindingOf(payload))).toEqual(payload);
    }
  });

  it('issues URL-safe text with one dot, readable by the same secret in another codec', () => {
    const text = codec.encode(makePayload());
    expect(text).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(encodeURIComponent(text)).toBe(text);
    expect(createCursorCodec(new Uint8Array(secret)).decode(text, bindingOf(makePayload()))).toEqual(makePayload());
  });

  it('is deterministic and carries a version', () => {
    const text = codec.encode(makePayload());
    expect(codec.encode(makePayload())).toBe(text);
    const json = JSON.parse(Buffer.from(text.split('.')[0]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    expect(json).toEqual({
      v: 1,
      r: 'tasks',
      w: 'ten_AAAAAAAAAAAAAAAAAAAA',
      s: 'createdAt',
      o: 'desc',
      k: 1795426860000,
      i: 'tsk_0000000000000000000001',
    });
  });

  it('is not affected by later changes to the secret array', () => {
    const mutable = new Uint8Array(32).fill(9);
    const own = createCursorCodec(mutable);
    const text = own.encode(makePayload());
    mutable.fill(0);
    expect(own.decode(text, bindingOf(makePayload()))).toEqual(makePayload());
  });
});

describe('cursor codec: refuses to encode what cannot round-trip', () => {
  it.each([
    ['NaN key', { key: Number.NaN }],
    ['Infinity key', { key: Number.POSITIVE_INFINITY }],
    ['object key', { key: {} as unknown as string }],
    ['empty id', { id: '' }],
    ['empty workspace', { workspaceId: '' }],
    ['bad order', { order: 'up' as 'asc' }],
  ])('%s', (_, overrides) => {
    expect(() => codec.encode(makePayload(overrides))).toThrow(TypeError);
  });

  it('a cursor longer than the limit', () => {
    // 200 control characters (the longest title) fit; a key far beyond any stored value does not.
    expect(() => codec.encode(makePayload({ key: '\u0001'.repeat(200) }))).not.toThrow();
    expect(() => codec.encode(makePayload({ key: '\u0001'.repeat(600) }))).toThrow(RangeError);
  });

  it('a short secret', () => {
    expect(() => createCursorCodec(new Uint8Array(31))).toThrow(/at least 32 bytes/);
  });
});

describe('cursor codec: tampering is unreadable', () => {
  const text = codec.encode(makePayload());
  const [jsonPart, macPart] = text.split('.') as [string, string];

  it('a flipped byte anywhere in the payload', () => {
    const length = Buffer.from(jsonPart, 'base64url').length;
    for (let index = 0; index < length; index += 1) {
      expectRejected(`${flipByte(jsonPart, index)}.${macPart}`, 'unreadable');
    }
  });

  it('a flipped byte anywhere in the MAC', () => {
    for (let index = 0; index < 32; index += 1) {
      expectRejected(`${jsonPart}.${flipByte(macPart, index)}`, 'unreadable');
    }
  });

  it('a non-canonical last character (same bytes, other spelling)', () => {
    // 32 bytes leave 2 unused bits in the last base64 character; setting them decodes to the same MAC.
    const last = macPart.at(-1)!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const twin = alphabet[alphabet.indexOf(last) ^ 0x01]!;
    const other = `${macPart.slice(0, -1)}${twin}`;
    expect(Buffer.from(other, 'base64url').equals(Buffer.from(macPart, 'base64url'))).toBe(true);
    expectRejected(`${jsonPart}.${other}`, 'unreadable');
  });

  it("another cursor's MAC", () => {
    const otherMac = codec.encode(makePayload({ key: 1795426860001 })).split('.')[1]!;
    expectRejected(`${jsonPart}.${otherMac}`, 'unreadable');
  });

  it('a payload edited to point elsewhere, MAC kept', () => {
    const forged = Buffer.from(JSON.stringify({ v: 1, r: 'tasks', w: 'ten_AAAAAAAAAAAAAAAAAAAA', s: 'createdAt', o: 'desc', k: 0, i: 'tsk_x' })).toString('base64url');
    expectRejected(`${forged}.${macPart}`, 'unreadable');
  });

  it.each([
    ['empty', ''],
    ['only a dot', '.'],
    ['no dot', jsonPart],
    ['no MAC', `${jsonPart}.`],
    ['no payload', `.${macPart}`],
    ['three parts', `${text}.${macPart}`],
    ['truncated by one character', text.slice(0, -1)],
    ['truncated to half', text.slice(0, Math.floor(text.length / 2))],
    ['truncated MAC (16 bytes)', `${jsonPart}.${Buffer.from(macPart, 'base64url').subarray(0, 16).toString('base64url')}`],
    ['padded base64', `${jsonPart}.${macPart}=`],
    ['standard base64 characters', `${jsonPart.replace(/-/g, '+').replace(/_/g, '/')}+/.${macPart}`],
    ['spaces', ` ${text}`],
    ['non-base64 text', 'not a cursor!'],
    ['percent-encoded', encodeURIComponent(`${text}+`)],
    ['non-ASCII', `${jsonPart}é.${macPart}`],
    ['10 KB', 'A'.repeat(10 * 1024)],
    ['10 KB of valid-looking parts', `${'A'.repeat(5 * 1024)}.${'A'.repeat(5 * 1024)}`],
  ])('%s', (_, candidate) => {
    expectRejected(candidate, 'unreadable');
  });

  it('refuses anything longer than the limit before verifying it', () => {
    const tooLong = `${'A'.repeat(MAX_CURSOR_LENGTH - 43)}.${macPart}`;
    expect(tooLong).toHaveLength(MAX_CURSOR_LENGTH + 1);
    expect(decodeError(tooLong).message).toMatch(new RegExp(`longer than ${MAX_CURSOR_LENGTH}`));
    expect(decodeError('A'.repeat(10 * 1024)).message).toMatch(new RegExp(`longer than ${MAX_CURSOR_LENGTH}`));
  });

  it('accepts a genuine cursor right at the limit', () => {
    let longest = '';
    for (let length = 600; ; length += 1) {
      try {
        longest = codec.encode(makePayload({ key: 'x'.repeat(length) }));
      } catch (error) {
        expect(error).toBeInstanceOf(RangeError);
        break;
      }
    }
    expect(longest.length).toBeGreaterThan(MAX_CURSOR_LENGTH - 4);
    expect(longest.length).toBeLessThanOrEqual(MAX_CURSOR_LENGTH);
    expect(codec.decode(longest, bindingOf(makePayload())).key).toMatch(/^x+$/);
  });

  it('non-string input', () => {
    expectRejected(undefined as unknown as string, 'unreadable');
    expectRejected(42 as unknown as string, 'unreadable');
  });

  it('a cursor signed with another secret (secret rotated)', () => {
    const rotated = createCursorCodec(randomBytes(32));
    const foreign = rotated.encode(makePayload());
    expectRejected(foreign, 'unreadable');
    expect(() => rotated.decode(text, bindingOf(makePayload()))).toThrow(CursorError);
  });
});

describe('cursor codec: a validly signed but unexpected payload is unreadable', () => {
  const base = { v: 1, r: 'tasks', w: 'ten_AAAAAAAAAAAAAAAAAAAA', s: 'createdAt', o: 'desc', k: 1, i: 'tsk_1' };

  it('accepts the reference payload (the helper signs like the codec)', () => {
    expect(codec.decode(signRaw(JSON.stringify(base)), bindingOf(makePayload())).id).toBe('tsk_1');
  });

  it.each([
    ['another version', { ...base, v: 2 }],
    ['no version', { ...base, v: undefined }],
    ['a string version', { ...base, v: '1' }],
    ['a missing id', { ...base, i: undefined }],
    ['an empty id', { ...base, i: '' }],
    ['a numeric id', { ...base, i: 5 }],
    ['an object key', { ...base, k: { $gt: 0 } }],
    ['an array key', { ...base, k: [1] }],
    ['a boolean key', { ...base, k: true }],
    ['a missing key', { ...base, k: undefined }],
    ['an unknown order', { ...base, o: 'sideways' }],
    ['a numeric workspace', { ...base, w: 1 }],
  ])('%s', (_, wire) => {
    expectRejected(signRaw(JSON.stringify(wire)), 'unreadable');
  });

  it.each([
    ['not JSON', '{"v":1,'],
    ['a JSON array', '[1,"tasks"]'],
    ['JSON null', 'null'],
    ['a JSON string', '"tasks"'],
  ])('%s', (_, json) => {
    expectRejected(signRaw(json), 'unreadable');
  });
});

describe('cursor codec: a cursor of another listing is a mismatch', () => {
  const payload = makePayload();
  const text = codec.encode(payload);

  it.each([
    ['another sort', { sort: 'updatedAt' }],
    ['another order', { order: 'asc' as const }],
    ['another workspace', { workspaceId: 'ten_BBBBBBBBBBBBBBBBBBBB' }],
    ['another resource', { resource: 'projects' }],
  ])('%s', (_, change) => {
    const error = decodeError(text, { ...bindingOf(payload), ...change });
    expect(error.reason).toBe('mismatch');
    expect(error.message).not.toContain('ten_');
  });

  it('checks the MAC before the binding: a forged cursor of another listing is unreadable', () => {
    const [jsonPart] = codec.encode(makePayload({ sort: 'title', key: 'x' })).split('.');
    expectRejected(`${jsonPart}.${text.split('.')[1]}`, 'unreadable', { ...bindingOf(payload), sort: 'title' });
  });
});
