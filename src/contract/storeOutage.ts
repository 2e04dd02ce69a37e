import { asStoreUnavailable, WRITE_RETRY_PAUSES_MS } from '../store/busyWrites.js';
import { PipelineFailure } from './pipelineFailure.js';

/**
 * Retry-After of a call that found the database unreachable: about what a PostgreSQL restart or a
 * failover takes, long enough that clients do not hammer a database coming back.
 */
export const UNREACHABLE_RETRY_AFTER_SECONDS = 5;

/**
 * The declared 503 of a database that cannot answer now (StoreUnavailableError, or a driver's
 * error that means the same), as a failure each surface words in its own shape: the APIs' pipeline,
 * the MCP caller lookup, /oauth. Undefined for any other error. A busy database is worth retrying
 * after the time the writes' own retries took (`busyPausesMs`).
 */
export function storeOutageFailure(error: unknown, busyPausesMs: readonly number[] = WRITE_RETRY_PAUSES_MS): PipelineFailure | undefined {
  const unavailable = asStoreUnavailable(error);
  if (!unavailable) return undefined;
  if (unavailable.reason === 'busy') {
    const budgetSeconds = busyPausesMs.reduce((sum, pause) => sum + pause, 0) / 1000;
    return new PipelineFailure({ kind: 'unavailable', reason: 'busy', retryAfterSeconds: Math.max(1, Math.ceil(budgetSeconds)) });
  }
  return new PipelineFailure({ kind: 'unavailable', reason: 'unreachable', retryAfterSeconds: UNREACHABLE_RETRY_AFTER_SECONDS });
}
