import { randomBytes as cryptoRandomBytes } from 'node:crypto';

/** Source of random bytes; node:crypto by default, replaceable in tests. */
export type RandomBytes = (size: number) => Uint8Array;

const RANDOM_POOL_BYTES = 4096;
let randomPool = new Uint8Array(0);
let randomPoolOffset = 0;

/**
 * node:crypto's bytes, drawn 4 KiB at a time: a call costs about 7 µs whatever its size, and a
 * created resource takes several (its id, its event's id, the IV of its sealed answer). Each caller
 * gets a copy of bytes no other caller gets, never a view of the pool.
 */
export const defaultRandomBytes: RandomBytes = (size) => {
  // node:crypto refuses what is not a size; large sizes gain nothing from the pool.
  if (!Number.isSafeInteger(size) || size < 0 || size > RANDOM_POOL_BYTES / 8) return cryptoRandomBytes(size);
  if (randomPoolOffset + size > randomPool.length) {
    randomPool = new Uint8Array(cryptoRandomBytes(RANDOM_POOL_BYTES));
    randomPoolOffset = 0;
  }
  const bytes = randomPool.slice(randomPoolOffset, randomPoolOffset + size);
  randomPoolOffset += size;
  return bytes;
};

const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A prefixed id such as `ten_4Fh…`: 20 characters of [A-Za-z0-9] (about 119 bits), so that ids
 * match the `^<prefix>_[A-Za-z0-9]+$` patterns of the contract.
 */
export function newId(prefix: string, randomBytes: RandomBytes = defaultRandomBytes, length = 20): string {
  let body = '';
  while (body.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 × 62: dropping larger bytes keeps every character equally likely.
      if (byte < 248 && body.length < length) body += alphabet[byte % 62];
    }
  }
  return `${prefix}_${body}`;
}
