// The process's one cache of encoded answers, shared under one byte cap by everything that keeps
// answers (the portfolio reader, the /v1 list pages). Each entry carries the revision it was built
// at, a revision the database owns; a lookup names the current revision and finds nothing built at
// another, so a change is never served stale. Past the cap the least recently used entries go.
// It holds no data of its own and reads nothing: the store keeps answers in it, beside their reads.

/** What one entry costs besides its bytes and key: the map slot, the entry and the Buffer objects. */
const ENTRY_OVERHEAD_BYTES = 160;

export interface BoundedCacheOptions {
  /** Most bytes kept across every space: answers, keys and each entry's overhead. 0 keeps nothing. */
  maxBytes: number;
}

/** One user's keys in the cache. */
export interface CacheSpace {
  /**
   * The answer kept under `key` if it was built at `revision` and still holds at the instant `at`;
   * an entry built at another revision, or kept until `at` or earlier, is dropped.
   */
  get(key: string, revision: number, at?: number): Buffer | undefined;
  /**
   * Keeps `answer` under `key` as built at `revision`, dropping least recently used entries (of
   * this space first when it is over its own entry cap) until the cache is within its byte cap.
   * Returns the bytes to send: the kept copy, or `answer` itself when it is not kept. An answer
   * that reads otherwise from an instant on, without a new revision, holds `until` then.
   */
  keep(key: string, revision: number, answer: Buffer, until?: number): Buffer;
}

export interface BoundedCache {
  /** A space of its own for one user; `maxEntries` caps how many entries it may hold (0: none). */
  space(name: string, options?: { maxEntries?: number }): CacheSpace;
  /** Bytes counted against the cap now. */
  readonly bytes: number;
  /** Entries kept now, across every space. */
  readonly entries: number;
}

interface SpaceState {
  entries: number;
  maxEntries: number;
}

interface Entry {
  space: SpaceState;
  revision: number;
  until: number;
  answer: Buffer;
  size: number;
}

export function createBoundedCache({ maxBytes }: BoundedCacheOptions): BoundedCache {
  // Map order is recency order: a hit moves its entry to the end, so the first entry is the least recently used.
  const entries = new Map<string, Entry>();
  const spaceNames = new Set<string>();
  let bytes = 0;

  const drop = (key: string, entry: Entry): void => {
    entries.delete(key);
    bytes -= entry.size;
    entry.space.entries -= 1;
  };
  const dropLeastRecentlyUsed = (of?: SpaceState): void => {
    for (const [key, entry] of entries) {
      if (of === undefined || entry.space === of) return drop(key, entry);
    }
  };

  return {
    space(name, { maxEntries = Number.POSITIVE_INFINITY } = {}) {
      // Two users under one name would read each other's entries.
      if (spaceNames.has(name)) throw new Error(`the cache already has a space named "${name}"`);
      spaceNames.add(name);
      const state: SpaceState = { entries: 0, maxEntries };
      const prefix = `${name}\u0000`;
      return {
        get(key, revision, at = Number.NEGATIVE_INFINITY) {
          const fullKey = prefix + key;
          const entry = entries.get(fullKey);
          if (entry === undefined) return undefined;
          if (entry.revision !== revision || at >= entry.until) {
            drop(fullKey, entry);
            return undefined;
          }
          entries.delete(fullKey);
          entries.set(fullKey, entry);
          return entry.answer;
        },
        keep(key, revision, answer, until = Number.POSITIVE_INFINITY) {
          const fullKey = prefix + key;
          const existing = entries.get(fullKey);
          if (existing !== undefined) drop(fullKey, existing);
          const size = answer.length + 2 * fullKey.length + ENTRY_OVERHEAD_BYTES;
          if (size > maxBytes || state.maxEntries === 0) return answer;
          const kept = ownAllocation(answer);
          entries.set(fullKey, { space: state, revision, until, answer: kept, size });
          bytes += size;
          state.entries += 1;
          if (state.entries > state.maxEntries) dropLeastRecentlyUsed(state);
          while (bytes > maxBytes) dropLeastRecentlyUsed();
          return kept;
        },
      };
    },
    get bytes() {
      return bytes;
    },
    get entries() {
      return entries.size;
    },
  };
}

/**
 * A small Buffer is usually a slice of Node's shared 8 KiB pool, and keeping it would keep the
 * whole slab; a kept answer gets memory of its own, so the cap counts what is actually held.
 */
function ownAllocation(answer: Buffer): Buffer {
  if (answer.byteOffset === 0 && answer.buffer.byteLength === answer.length) return answer;
  const own = Buffer.allocUnsafeSlow(answer.length);
  answer.copy(own);
  return own;
}
