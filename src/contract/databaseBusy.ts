import { setTimeout as wait } from 'node:timers/promises';
import { isDatabaseBusy } from '../store/database.js';
import { StoreUnavailableError } from '../store/errors.js';

/**
 * Pauses between attempts of a write that found the database locked: about 1.3 s in all. The
 * connection's own busy timeout is short, so each attempt blocks the event loop only briefly and
 * other requests are served in the pauses.
 */
export const WRITE_RETRY_PAUSES_MS = [10, 20, 40, 80, 150, 250, 300, 400] as const;

/**
 * Runs `attempt` (one whole transaction: it writes everything or nothing) again after each pause
 * while the database is locked; then gives up with StoreUnavailableError (`busy`).
 */
export async function retryWhileBusy<T>(attempt: () => T | Promise<T>, pausesMs: readonly number[] = WRITE_RETRY_PAUSES_MS): Promise<T> {
  for (let index = 0; ; index += 1) {
    try {
      return await attempt();
    } catch (error) {
      if (!isDatabaseBusy(error)) throw error;
      const pause = pausesMs[index];
      if (pause === undefined) throw new StoreUnavailableError('busy', { cause: error });
      await wait(pause);
    }
  }
}
