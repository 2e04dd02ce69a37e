import { describe, expect, it } from 'vitest';
import { defaultRandomBytes, newId } from '../../src/store/ids.js';

describe('defaultRandomBytes', () => {
  it('hands every caller bytes of its own: a copy that later calls never change, never the same bytes twice', () => {
    const first = defaultRandomBytes(40);
    const kept = Uint8Array.from(first);
    // Enough calls to draw the pool again several times over.
    const drawn = Array.from({ length: 500 }, () => Buffer.from(defaultRandomBytes(40)).toString('hex'));
    expect(first).toEqual(kept);
    expect(new Set([Buffer.from(first).toString('hex'), ...drawn]).size).toBe(501);
    expect(first.buffer.byteLength).toBe(40);
  });

  it('gives exactly the size asked for, large sizes straight from node:crypto, and refuses what is not a size', () => {
    for (const size of [0, 1, 12, 32, 512, 513, 10_000]) expect(defaultRandomBytes(size)).toHaveLength(size);
    for (const size of [Number.NaN, -1]) expect(() => defaultRandomBytes(size)).toThrow();
    expect(defaultRandomBytes(40)).toHaveLength(40);
  });

  it('makes ids of the contract pattern from it', () => {
    const ids = Array.from({ length: 1000 }, () => newId('tsk'));
    expect(ids.every((id) => /^tsk_[A-Za-z0-9]{20}$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(1000);
  });
});
