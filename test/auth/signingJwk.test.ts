// The OAuth signing key the server makes when none is configured: a P-256 private JWK that signs
// ES256, whose signature verifies with its public half alone.
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateSigningJwk } from '../../src/auth/serverSecrets.js';

describe('generateSigningJwk', () => {
  it('makes a P-256 key whose x and y belong to its d, which signs and verifies ES256', () => {
    const jwk = JSON.parse(generateSigningJwk(() => Date.UTC(2026, 11, 6))) as Record<string, string>;
    expect(jwk).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: `es256-${Date.UTC(2026, 11, 6).toString(36)}` });
    const privateKey = createPrivateKey({ key: jwk, format: 'jwk' });
    // Signed with d, verified with a key made of x and y alone: they belong together.
    const signature = sign('sha256', Buffer.from('payload'), { key: privateKey, dsaEncoding: 'ieee-p1363' });
    expect(verify('sha256', Buffer.from('payload'), { key: createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: jwk.x!, y: jwk.y! }, format: 'jwk' }), dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);
  });

  it('writes every coordinate and the scalar at their full 32 bytes, leading zeros included', () => {
    // A scalar with a leading zero byte comes about once in 256 keys: 2,000 keys meet about eight.
    const lengths = new Set<number>();
    for (let index = 0; index < 2_000; index += 1) {
      const jwk = JSON.parse(generateSigningJwk()) as Record<string, string>;
      for (const member of ['x', 'y', 'd']) lengths.add(Buffer.from(jwk[member]!, 'base64url').length);
    }
    expect([...lengths]).toEqual([32]);
  });
});
