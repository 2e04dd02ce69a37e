// The store's one verdict on a change that could not get its turn, in words neither engine owns:
// callers above the store (the pipeline, AI reservations) retry on it and answer it as `busy`
// without knowing what SQLite or PostgreSQL said.
import { setTimeout as wait } from 'node:timers/promises';
import { isDatabaseBusy } from './database.js';
import { StoreUnavailableError } from './errors.js';

/**
 * Pauses between attempts of a write that found the database locked: about 1.3 s in all. The
 * connection's own busy timeout is short, so each attempt blocks the event loop only briefly and
 * other requests are served in the pauses.
 */
export const WRITE_RETRY_PAUSES_MS = [10, 20, 40, 80, 150, 250, 300, 400] as const;

/**
 * Whether trying the same change again may succeed: another writer held the lock (SQLite, or this
 * process's own open transaction), or a serialization failure, deadlock or lock wait outlasted the
 * engine's own retries (PostgreSQL).
 */
export function isRetryableBusy(error: unknown): boolean {
  return isDatabaseBusy(error);
}

/**
 * Runs `attempt` (one whole transaction: it writes everything or nothing) again after each pause
 * while the store says busy; then gives up with StoreUnavailableError (`busy`).
 */
export async function retryWhileBusy<T>(attempt: () => T | Promise<T>, pausesMs: readonly number[] = WRITE_RETRY_PAUSES_MS): Promise<T> {
  for (let index = 0; ; index += 1) {
    try {
      return await attempt();
    } catch (error) {
      if (!isRetryableBusy(error)) throw error;
      const pause = pausesMs[index];
      if (pause === undefined) throw new StoreUnavailableError('busy', { cause: error });
      await wait(pause);
    }
  }
}

export { asStoreUnavailable } from './database.js';
