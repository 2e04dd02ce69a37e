import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  maximumSessionLifetimeSeconds,
  defaultSessionLifetimeSeconds,
  issueSessionToken,
  sessionTokenAudience,
  sessionTokenIssuer,
  verifySessionToken,
} from '../../src/auth/sessionTokens.js';
import { loadKeyRing } from '../../src/auth/keyRings.js';
import type { RandomBytes } from '../../src/store/ids.js';
import { makeTempDir } from '../store/factories.js';
import { runScriptProcess, sourceUrl } from '../support/serverProcess.js';

const secret = new Uint8Array(32).fill(7);
const otherSecret = new Uint8Array(32).fill(8);
const now = Date.UTC(2026, 10, 23, 9, 41, 0);
const userId = 'usr_demoOwner';
const workspaceId = 'ten_demoWorkspace';

const validClaims = (overrides: JWTPayload = {}): JWTPayload => ({
  iss: sessionTokenIssuer,
  sub: userId,
  aud: sessionTokenAudience,
  wid: workspaceId,
  iat: Math.floor(now / 1000),
  exp: Math.floor(now / 1000) + 3600,
  ...overrides,
});

/** Signs arbitrary claims with jose, so that each test changes exactly one thing. */
const signWithJose = (claims: JWTPayload, key: Uint8Array = secret, alg = 'HS256') =>
  new SignJWT(claims).setProtectedHeader({ alg, typ: 'JWT' }).sign(key);

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const expired = { exp: Math.floor(now / 1000) - 10 };

describe('issueSessionToken', () => {
  it('produces exactly the bytes jose SignJWT produces for the same header and claims', async () => {
    const token = issueSessionToken(secret, { userId, workspaceId, lifetimeSeconds: 3600, now });
    expect(token).toBe(await signWithJose(validClaims()));
    const [header, payload] = token.split('.');
    expect(JSON.parse(Buffer.from(header!, 'base64url').toString())).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(JSON.parse(Buffer.from(payload!, 'base64url').toString())).toEqual(validClaims());
  });

  it('has a default lifetime of one hour and refuses a fractional lifetime', () => {
    expect(defaultSessionLifetimeSeconds).toBe(3600);
    expect(() => issueSessionToken(secret, { userId, workspaceId, lifetimeSeconds: 1.5, now })).toThrow(TypeError);
  });

  it('issues tokens for at most 24 hours', () => {
    expect(maximumSessionLifetimeSeconds).toBe(24 * 3600);
    expect(() => issueSessionToken(secret, { userId, workspaceId, lifetimeSeconds: 24 * 3600, now })).not.toThrow();
    expect(() => issueSessionToken(secret, { userId, workspaceId, lifetimeSeconds: 24 * 3600 + 1, now })).toThrow(RangeError);
  });
});

describe('verifySessionToken', () => {
  it('refuses a genuine token that lives longer than 24 hours (the 274-year token), or was issued in the future beyond 60 s', async () => {
    const seconds = Math.floor(now / 1000);
    expect(await verifySessionToken(secret, await signWithJose(validClaims({ exp: seconds + 24 * 3600 })), now)).toMatchObject({ ok: true });
    expect(await verifySessionToken(secret, await signWithJose(validClaims({ exp: seconds + 274 * 365 * 24 * 3600 })), now)).toEqual({ ok: false, reason: 'invalid' });
    expect(await verifySessionToken(secret, await signWithJose(validClaims({ iat: seconds + 60, exp: seconds + 3660 })), now)).toMatchObject({ ok: true });
    expect(await verifySessionToken(secret, await signWithJose(validClaims({ iat: seconds + 61, exp: seconds + 3661 })), now)).toEqual({ ok: false, reason: 'invalid' });
    expect(await verifySessionToken(secret, await signWithJose(validClaims({ iat: undefined })), now)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('accepts a fresh token and names its user and workspace', async () => {
    const token = issueSessionToken(secret, { userId, workspaceId, lifetimeSeconds: 60, now });
    expect(await verifySessionToken(secret, token, now)).toEqual({
      ok: true,
      userId,
      workspaceId,
      expiresAt: Math.floor(now / 1000) * 1000 + 60_000,
      issuedAt: Math.floor(now / 1000) * 1000,
    });
    expect(await verifySessionToken(secret, token, now + 59_999)).toMatchObject({ ok: true });
  });

  it('says expired for a genuine token past exp, from the instant exp on, and for a negative lifetime', async () => {
    const token = issueSessionToken(secret, { userId, workspaceId, lifetimeSeconds: 60, now });
    expect(await verifySessionToken(secret, token, now + 60_000)).toEqual({ ok: false, reason: 'expired' });
    const minted = issueSessionToken(secret, { userId, workspaceId, lifetimeSeconds: -3600, now });
    expect(await verifySessionToken(secret, minted, now)).toEqual({ ok: false, reason: 'expired' });
  });

  const alg = (name: string) => b64({ alg: name, typ: 'JWT' });
  const invalidCases: [string, () => Promise<string>][] = [
    ['alg none, empty signature', async () => `${alg('none')}.${b64(validClaims())}.`],
    ['alg none, expired', async () => `${alg('none')}.${b64(validClaims(expired))}.`],
    ['alg "None" with the HS256 signature of the same input', async () => {
      const token = await signWithJose(validClaims());
      return `${alg('None')}.${token.split('.').slice(1).join('.')}`;
    }],
    ['HS512 with the right secret', () => signWithJose(validClaims(), secret, 'HS512')],
    ['HS512, expired', () => signWithJose(validClaims(expired), secret, 'HS512')],
    ['HS384 with the right secret', () => signWithJose(validClaims(), new Uint8Array(48).fill(7), 'HS384')],
    ['RS256', async () => {
      const { privateKey } = await generateKeyPair('RS256');
      return new SignJWT(validClaims()).setProtectedHeader({ alg: 'RS256' }).sign(privateKey);
    }],
    ['wrong secret', () => signWithJose(validClaims(), otherSecret)],
    ['wrong secret, expired', () => signWithJose(validClaims(expired), otherSecret)],
    ['tampered payload (other workspace)', async () => {
      const [header, , signature] = (await signWithJose(validClaims())).split('.');
      return `${header}.${b64(validClaims({ wid: 'ten_other' }))}.${signature}`;
    }],
    ['tampered payload of an expired token (exp moved)', async () => {
      const [header, , signature] = (await signWithJose(validClaims(expired))).split('.');
      return `${header}.${b64(validClaims())}.${signature}`;
    }],
    ['signature stripped', async () => (await signWithJose(validClaims())).split('.').slice(0, 2).join('.') + '.'],
    ['wrong aud', () => signWithJose(validClaims({ aud: 'portfolio' }))],
    ['wrong aud, expired', () => signWithJose(validClaims({ aud: 'portfolio', ...expired }))],
    ['wrong iss', () => signWithJose(validClaims({ iss: 'someone-else' }))],
    ['wrong iss, expired', () => signWithJose(validClaims({ iss: 'someone-else', ...expired }))],
    ['no wid', () => signWithJose({ ...validClaims(), wid: undefined })],
    ['no wid, expired', () => signWithJose({ ...validClaims(expired), wid: undefined })],
    ['sub is not a user id', () => signWithJose(validClaims({ sub: 'pat_x' }))],
    ['sub is not a user id, expired', () => signWithJose(validClaims({ sub: 'pat_x', ...expired }))],
    ['no exp', () => signWithJose({ ...validClaims(), exp: undefined })],
    ['no iat', () => signWithJose({ ...validClaims(), iat: undefined })],
    ['not yet valid (nbf) and expired', () => signWithJose(validClaims({ nbf: Math.floor(now / 1000) + 60, ...expired }))],
    ['empty', async () => ''],
    ['one segment', async () => 'abc'],
    ['three garbage segments', async () => 'a.b.c'],
    ['a PAT', async () => `svc_pat_${'A'.repeat(43)}`],
    ['payload not JSON', async () => {
      const token = await signWithJose(validClaims());
      return `${token.split('.')[0]}.bm90IGpzb24.${token.split('.')[2]}`;
    }],
  ];

  it.each(invalidCases)('says invalid for %s', async (_label, build) => {
    expect(await verifySessionToken(secret, await build(), now)).toEqual({ ok: false, reason: 'invalid' });
  });
});

/** The newest key of a key ring made from a variable or a file, as the server loads its session key. */
const loadSecret = (envValue: string | undefined, file: string, options: { name?: string; randomBytes?: RandomBytes } = {}) =>
  loadKeyRing(envValue, file, { name: options.name ?? 'The secret', ...(options.randomBytes ? { randomBytes: options.randomBytes } : {}) }).newest().key;

describe('a key loaded from a variable or a file, created on first use', () => {
  let dir: string;
  beforeEach(() => {
    dir = makeTempDir();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('uses the configured value and never touches the file', () => {
    const configured = Buffer.alloc(32, 3).toString('base64url');
    const file = path.join(dir, 'session-jwt.key');
    expect(Buffer.from(loadSecret(configured, file))).toEqual(Buffer.alloc(32, 3));
    expect(() => statSync(file)).toThrow();
  });

  it('refuses a configured value that is too short or not base64url, naming it', () => {
    const file = path.join(dir, 'k');
    expect(() => loadSecret(Buffer.alloc(31).toString('base64url'), file, { name: 'SESSION_JWT_SECRET' })).toThrow(/SESSION_JWT_SECRET must be at least 32 bytes/);
    expect(() => loadSecret(`${'a'.repeat(43)}=`, file)).toThrow(/at least 32 bytes/);
  });

  it('generates 32 random bytes into a mode-0600 file on first use and reuses them', () => {
    const file = path.join(dir, 'data', 'session-jwt.key');
    const first = loadSecret(undefined, file, { randomBytes: (size) => new Uint8Array(size).fill(9) });
    expect(Buffer.from(first)).toEqual(Buffer.alloc(32, 9));
    expect(readFileSync(file, 'utf8').trim()).toBe(Buffer.alloc(32, 9).toString('base64url'));
    if (process.platform !== 'win32') expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(Buffer.from(loadSecret('', file))).toEqual(Buffer.from(first));
  });

  it('refuses a damaged key file instead of replacing it', () => {
    const file = path.join(dir, 'session-jwt.key');
    writeFileSync(file, 'short\n');
    expect(() => loadSecret(undefined, file)).toThrow(new RegExp(`in ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    expect(readFileSync(file, 'utf8')).toBe('short\n');
  });

  it('gives processes that start at once the same secret', async () => {
    const file = path.join(dir, 'race', 'session-jwt.key');
    const script = `const { loadKeyRing } = await import(${sourceUrl('src/auth/keyRings.ts')});
process.stdout.write(Buffer.from(loadKeyRing(undefined, ${JSON.stringify(file)}, { name: 'k' }).newest().key).toString('hex'));`;
    const runs = await Promise.all([1, 2, 3, 4].map(() => runScriptProcess(script)));
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
    const secrets = runs.map((run) => run.stdout);
    expect(new Set(secrets).size).toBe(1);
    expect(secrets[0]).toBe(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64url').toString('hex'));
  });
});
