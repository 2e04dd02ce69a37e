import { randomBytes as cryptoRandomBytes } from 'node:crypto';

/** Source of random bytes; node:crypto by default, replaceable in tests. */
export type RandomBytes = (size: number) => Uint8Array;

export const defaultRandomBytes: RandomBytes = (size) => cryptoRandomBytes(size);

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
