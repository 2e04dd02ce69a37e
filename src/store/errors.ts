/** Why a store call refused to act; the CLI prints the message, callers may branch on `code`. */
export type StoreErrorCode = 'tenant_not_found' | 'api_key_not_found' | 'invalid_argument';

export class StoreError extends Error {
  override readonly name = 'StoreError';

  constructor(
    readonly code: StoreErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The database cannot answer now, through no fault of the call: `busy` — another writer held the
 * lock past the wait (SQLite), or a serialization failure outlasted the retries (PostgreSQL);
 * `unreachable` — the engine is down, restarting or cut off (PostgreSQL refusing or dropping
 * connections, a pool that found no connection in time; SQLite unable to open or read its file).
 * The engines raise it; the APIs answer it with their declared 503 and Retry-After.
 */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';

  constructor(
    readonly reason: 'busy' | 'unreachable',
    options: { cause?: unknown } = {},
  ) {
    super(reason === 'busy' ? 'the database is busy with another writer' : 'the database is unreachable (down, restarting or cut off)', options);
  }
}

/** PostgreSQL SQLSTATEs of a server going away: admin_shutdown, crash_shutdown, cannot_connect_now, too_many_connections. */
const unreachablePostgresStates = new Set(['57P01', '57P02', '57P03', '53300']);
/** Socket errors of a connection that could not be made or was lost. */
const unreachableSocketCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** What node-postgres throws, without a code, when a connection ends under a query or none is found in time. */
const unreachablePostgresMessages = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable|Client was closed and is not queryable|Connection ended unexpectedly)/;

/**
 * Whether `error` says the engine cannot be reached (not that the call was wrong): the driver's own
 * errors, before an engine has turned them into StoreUnavailableError.
 */
export function isEngineUnreachable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    // Class 08: connection exception.
    if (/^08[0-9A-Z]{3}$/.test(code) || unreachablePostgresStates.has(code) || unreachableSocketCodes.has(code)) return true;
    if (code === 'SQLITE_CANTOPEN' || code.startsWith('SQLITE_IOERR') || code === 'SQLITE_NOTADB' || code === 'SQLITE_READONLY_DBMOVED') return true;
  }
  // A connection attempt to several addresses fails with all their errors at once.
  if (error instanceof AggregateError) return error.errors.some(isEngineUnreachable);
  return unreachablePostgresMessages.test(error.message);
}

/** The engines' translation: an error of an unreachable engine as StoreUnavailableError, any other as it is. */
export function asStoreFailure(error: unknown): unknown {
  if (error instanceof StoreUnavailableError) return error;
  return isEngineUnreachable(error) ? new StoreUnavailableError('unreachable', { cause: error }) : error;
}
