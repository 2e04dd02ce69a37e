import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDirsRemovedAfterEach } from '../store/factories.js';
import { fixedKeyRing, formatKeyList, loadKeyRing, newRingKey, parseKeyList, writeKeyFile, type RingKey } from '../../src/auth/keyRings.js';
import { issueSessionToken, verifySessionToken } from '../../src/auth/sessionTokens.js';
import { createCursorCodec } from '../../src/paging/cursor.js';
import { createSecretBox, sealedKeyId } from '../../src/auth/secretBox.js';
import { createCipheriv, hkdfSync } from 'node:crypto';

const bytes = (fill: number) => new Uint8Array(32).fill(fill);
const text = (fill: number) => Buffer.from(bytes(fill)).toString('base64url');
const tempDir = tempDirsRemovedAfterEach();

describe('key lists', () => {
  it('reads a bare key (every file written before key ids) as k0', () => {
    expect(parseKeyList(`${text(1)}\n`, 'X')).toEqual([{ id: 'k0', key: bytes(1), addedAt: undefined }]);
  });

  it('reads ids, times and comments, newest last, from lines or commas', () => {
    const keys = parseKeyList(`# rotated\n${text(1)}\nk1 ${text(2)} 2026-11-27T18:00:00.000Z`, 'X');
    expect(keys.map((key) => key.id)).toEqual(['k0', 'k1']);
    expect(keys[1]!.addedAt).toBe(Date.UTC(2026, 10, 27, 18));
    expect(parseKeyList(`k0 ${text(1)},k1 ${text(2)}`, 'X').map((key) => key.id)).toEqual(['k0', 'k1']);
    expect(parseKeyList(formatKeyList(keys), 'X')).toEqual(keys);
  });

  it('refuses malformed lists, naming where', () => {
    expect(() => parseKeyList('', 'CURSOR_SECRET')).toThrow(/CURSOR_SECRET holds no key/);
    expect(() => parseKeyList(`k1 ${text(1)}\n${text(2)}`, 'X')).toThrow(/only the first key/);
    expect(() => parseKeyList(`k1 ${text(1)}\nk1 ${text(2)}`, 'X')).toThrow(/listed twice/);
    expect(() => parseKeyList(`k1 ${text(1)} yesterday`, 'X')).toThrow(/ISO 8601/);
    expect(() => parseKeyList(`k.1 ${text(1)}`, 'X')).toThrow(/key id/);
    expect(() => parseKeyList(`k1 ${Buffer.alloc(31).toString('base64url')}`, 'X')).toThrow(/at least 32 bytes/);
  });

  it('accepts a replaced key until the grace period after its successor was added', () => {
    const ring = fixedKeyRing([
      { id: 'k0', key: bytes(1), addedAt: undefined },
      { id: 'k1', key: bytes(2), addedAt: 1_000 },
      { id: 'k2', key: bytes(3), addedAt: 5_000 },
    ]);
    const [k0, k1, k2] = ring.keys() as [RingKey, RingKey, RingKey];
    expect(ring.accepts(k0, 1_999, 1_000)).toBe(true);
    expect(ring.accepts(k0, 2_000, 1_000)).toBe(false);
    expect(ring.accepts(k1, 5_999, 1_000)).toBe(true);
    expect(ring.accepts(k1, 6_000, 1_000)).toBe(false);
    expect(ring.accepts(k2, Number.MAX_SAFE_INTEGER, 0)).toBe(true);
  });
});

describe('a key file', () => {
  it('is created with one bare key, mode 0600, and read again when it changes', () => {
    const file = path.join(tempDir(), 'data', 'cursor.key');
    let clock = 0;
    const ring = loadKeyRing(undefined, file, { name: 'CURSOR_SECRET', randomBytes: (size) => new Uint8Array(size).fill(4), monotonicNow: () => clock });
    expect(readFileSync(file, 'utf8')).toBe(`${text(4)}\n`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(ring.newest().id).toBe('k0');

    writeKeyFile(file, [...ring.keys(), newRingKey(ring.keys(), 7_000, (size) => new Uint8Array(size).fill(5))]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(ring.newest().id).toBe('k0'); // looked at once a second at most
    clock = 1_000;
    expect(ring.newest()).toEqual({ id: 'k1', key: bytes(5), addedAt: 7_000 });
  });

  it('is read again at once when a value names an unknown key id, and kept when it turns unreadable', () => {
    const file = path.join(tempDir(), 'webhook-secrets.key');
    writeFileSync(file, `${text(1)}\n`, { mode: 0o600 });
    const ring = loadKeyRing(undefined, file, { name: 'WEBHOOK_SECRET_KEY', monotonicNow: () => 0 });
    writeKeyFile(file, [...ring.keys(), { id: 'k1', key: bytes(2), addedAt: 1 }]);
    expect(ring.find('k1')?.key).toEqual(bytes(2));
    writeFileSync(file, 'half written');
    expect(ring.find('k9')).toBeUndefined();
    expect(ring.keys().map((key) => key.id)).toEqual(['k0', 'k1']);
  });

  it('is read again at once when a cursor matches none of the known keys', () => {
    const file = path.join(tempDir(), 'cursor.key');
    writeFileSync(file, `${text(1)}\n`, { mode: 0o600 });
    const codec = createCursorCodec(loadKeyRing(undefined, file, { name: 'CURSOR_SECRET', monotonicNow: () => 0 }));
    const binding = { resource: 'tasks', workspaceId: 'ten_a', sort: 'createdAt', order: 'asc' } as const;
    writeKeyFile(file, [{ id: 'k0', key: bytes(1), addedAt: undefined }, { id: 'k1', key: bytes(2), addedAt: Date.now() }]);
    const signedElsewhere = createCursorCodec(bytes(2)).encode({ ...binding, key: 1, id: 'tsk_1' });
    expect(codec.decode(signedElsewhere, binding).id).toBe('tsk_1');
  });

  it('is not used when the environment variable is set', () => {
    const ring = loadKeyRing(`k0 ${text(1)},k3 ${text(3)}`, '/nowhere/session-jwt.key', { name: 'SESSION_JWT_SECRET' });
    expect(ring.newest().id).toBe('k3');
  });
});

describe('sealing with key ids', () => {
  const ring = fixedKeyRing([
    { id: 'k0', key: bytes(1), addedAt: undefined },
    { id: 'k1', key: bytes(2), addedAt: 1 },
  ]);

  it('seals with the newest key and opens with any listed key', () => {
    const box = createSecretBox(ring);
    const sealed = box.seal('whsec_x', 'whk_1');
    expect(sealed).toMatch(/^v2\.k1\./);
    expect(sealedKeyId(sealed)).toBe('k1');
    expect(box.open(sealed, 'whk_1')).toBe('whsec_x');
    const older = createSecretBox(bytes(1)).seal('whsec_y', 'whk_1');
    expect(older).toMatch(/^v2\.k0\./);
    expect(box.open(older, 'whk_1')).toBe('whsec_y');
    expect(() => createSecretBox(bytes(1)).open(sealed, 'whk_1')).toThrow(/key k1, which WEBHOOK_SECRET_KEY no longer lists/);
  });

  it('opens values sealed before key ids (v1) with k0', () => {
    const key = Buffer.from(hkdfSync('sha256', bytes(1), new Uint8Array(0), 'contract-api-server webhook signing secrets v1', 32));
    const iv = Buffer.alloc(12, 3);
    const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
    cipher.setAAD(Buffer.from('whk_1'));
    const ciphertext = Buffer.concat([cipher.update('whsec_legacy', 'utf8'), cipher.final()]);
    const legacy = ['v1', iv.toString('base64url'), ciphertext.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
    expect(sealedKeyId(legacy)).toBe('k0');
    expect(createSecretBox(ring).open(legacy, 'whk_1')).toBe('whsec_legacy');
    expect(() => createSecretBox(ring).open(legacy, 'whk_2')).toThrow(/did not open with key k0/);
  });
});

describe('session tokens and cursors across a rotation', () => {
  const now = Date.UTC(2026, 10, 27, 12);
  const rotated = fixedKeyRing([
    { id: 'k0', key: bytes(1), addedAt: undefined },
    { id: 'k1', key: bytes(2), addedAt: now },
  ]);
  const claims = { userId: 'usr_a', workspaceId: 'ten_a', lifetimeSeconds: 3600, now };

  it('names the signing key in the JWT header, and verifies the previous key for the grace period only', async () => {
    const fresh = issueSessionToken(rotated.newest(), claims);
    expect(JSON.parse(Buffer.from(fresh.split('.')[0]!, 'base64url').toString())).toEqual({ alg: 'HS256', typ: 'JWT', kid: 'k1' });
    expect(await verifySessionToken(rotated, fresh, now, 60_000)).toMatchObject({ ok: true });
    const before = issueSessionToken(bytes(1), claims);
    expect(await verifySessionToken(rotated, before, now + 59_999, 60_000)).toMatchObject({ ok: true });
    expect(await verifySessionToken(rotated, before, now + 60_000, 60_000)).toEqual({ ok: false, reason: 'invalid' });
    expect(await verifySessionToken(fixedKeyRing(bytes(1)), fresh, now)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('signs cursors with the newest key and reads the previous key\'s for the grace period only, in the same form', () => {
    let clock = now;
    const binding = { resource: 'tasks', workspaceId: 'ten_a', sort: 'createdAt', order: 'asc' } as const;
    const payload = { ...binding, key: 1, id: 'tsk_1' };
    const before = createCursorCodec(bytes(1)).encode(payload);
    const codec = createCursorCodec(rotated, { graceMs: 60_000, now: () => clock });
    const fresh = codec.encode(payload);
    expect(fresh).toBe(createCursorCodec(bytes(2)).encode(payload));
    expect(codec.decode(before, binding)).toEqual(payload);
    clock = now + 60_000;
    expect(() => codec.decode(before, binding)).toThrow(/does not match any key this server accepts/);
    expect(codec.decode(fresh, binding)).toEqual(payload);
  });
});
