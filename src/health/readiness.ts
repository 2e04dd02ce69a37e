// Whether this process should be sent traffic (/readyz): its database answers and holds this
// build's migrations, Redis answers when REDIS_URL is set, and it is not shutting down. A probe
// may come every second from several load balancers: the checks run at most once per CACHE_MS
// (concurrent probes share the one run), and each check is given CHECK_TIMEOUT_MS, so a probe
// never waits on a connection timeout. Shutting down is read afresh at every probe: it must show
// at once. Only the name of a failed check is ever answered; what failed is logged, once per
// change of state.
import { answeredWithin } from '../answeredWithin.js';
import type { Logger } from '../logger.js';
import type { DatabaseReadiness } from '../store/readiness.js';

/** How long one run of the checks is answered again. */
export const READINESS_CACHE_MS = 1_000;
/** A check unanswered for this long has failed (a PostgreSQL connect waits 5 s by default). */
export const READINESS_CHECK_TIMEOUT_MS = 2_000;

export type CheckState = 'ok' | 'fail' | 'unknown';

export interface ReadinessReport {
  ready: boolean;
  /**
   * `database`, `migrations` (`unknown` while the database does not answer), `redis` (only with
   * REDIS_URL), `shutdown` (`fail` from the first SIGTERM or SIGINT on).
   */
  checks: Record<string, CheckState>;
  /** Seconds since the oldest PENDING webhook delivery fell due; null when none is due (or the database does not answer). Informational. */
  oldestDueDeliveryAgeSeconds: number | null;
}

export interface Readiness {
  report(): Promise<ReadinessReport>;
  /** From now on every report says `shutdown: 'fail'`. */
  markShuttingDown(): void;
}

export interface ReadinessOptions {
  database: DatabaseReadiness;
  /** Redis's PING, when REDIS_URL is set. */
  redis?: { ping(): Promise<unknown> };
  now: () => number;
  logger: Logger;
  cacheMs?: number;
  checkTimeoutMs?: number;
}

export function createReadiness(options: ReadinessOptions): Readiness {
  const cacheMs = options.cacheMs ?? READINESS_CACHE_MS;
  const timeoutMs = options.checkTimeoutMs ?? READINESS_CHECK_TIMEOUT_MS;
  let shuttingDown = false;
  /** The last run's findings (all but `shutdown`) and when it began. */
  type Findings = Pick<ReadinessReport, 'checks' | 'oldestDueDeliveryAgeSeconds'>;
  let cached: { at: number; findings: Findings } | undefined;
  let running: Promise<Findings> | undefined;
  /** The failure last logged per check, so that a lasting outage is logged once. */
  const failing = new Map<string, string>();

  const note = (check: string, error: unknown) => {
    const reason = error instanceof Error ? error.message : String(error);
    if (failing.has(check)) return;
    failing.set(check, reason);
    options.logger.warn('readiness check failed: /readyz answers 503', { check, error: reason });
  };
  const recovered = (check: string) => {
    if (!failing.delete(check)) return;
    options.logger.info('readiness check passes again', { check });
  };

  const run = async (): Promise<Findings> => {
    const at = options.now();
    const checks: Record<string, CheckState> = {};
    let oldestDueDeliveryAgeSeconds: number | null = null;
    const database = (async () => {
      try {
        const current = await answeredWithin(options.database.migrationsCurrent(), timeoutMs);
        checks.database = 'ok';
        recovered('database');
        checks.migrations = current ? 'ok' : 'fail';
        if (current) recovered('migrations');
        else note('migrations', new Error('the database lacks a migration of this build'));
      } catch (error) {
        checks.database = 'fail';
        checks.migrations = 'unknown';
        note('database', error);
        return;
      }
      try {
        const oldest = await answeredWithin(options.database.oldestDueDeliveryAt(at), timeoutMs);
        oldestDueDeliveryAgeSeconds = oldest === null ? null : Math.max(0, Math.floor((at - oldest) / 1000));
      } catch (error) {
        // The database answered a moment ago; a failure now is the database's.
        checks.database = 'fail';
        note('database', error);
      }
    })();
    const redis = options.redis
      ? (async () => {
          try {
            await answeredWithin(options.redis!.ping(), timeoutMs);
            checks.redis = 'ok';
            recovered('redis');
          } catch (error) {
            checks.redis = 'fail';
            note('redis', error);
          }
        })()
      : undefined;
    await Promise.all([database, redis]);
    // One order whatever finished first: database, migrations, redis.
    const ordered: Record<string, CheckState> = {};
    for (const name of ['database', 'migrations', 'redis']) if (checks[name]) ordered[name] = checks[name];
    return { checks: ordered, oldestDueDeliveryAgeSeconds };
  };

  return {
    async report() {
      const at = options.now();
      if (!cached || at - cached.at >= cacheMs || at < cached.at) {
        running ??= run().finally(() => (running = undefined));
        cached = { at, findings: await running };
      }
      const checks: Record<string, CheckState> = { ...cached.findings.checks, shutdown: shuttingDown ? 'fail' : 'ok' };
      return { ready: Object.values(checks).every((state) => state === 'ok'), checks, oldestDueDeliveryAgeSeconds: cached.findings.oldestDueDeliveryAgeSeconds };
    },
    markShuttingDown() {
      shuttingDown = true;
    },
  };
}
