// The readiness checks on their own, with a database that answers as each test needs: a check that
// never answers fails after its time limit, probes arriving together share one run, and a lasting
// failure is logged once.
import { describe, expect, it } from 'vitest';
import { createReadiness } from '../../src/health/readiness.js';
import type { DatabaseReadiness } from '../../src/store/readiness.js';
import { memoryLogger } from '../support/testApp.js';

function database(overrides: Partial<DatabaseReadiness> = {}): DatabaseReadiness & { runs: number } {
  const stub = {
    runs: 0,
    async migrationsCurrent() {
      stub.runs += 1;
      return true;
    },
    oldestDueDeliveryAt: async () => null,
    ...overrides,
  };
  return stub;
}

describe('createReadiness', () => {
  it('fails a check that does not answer within its time limit, naming only that check', async () => {
    const lines: string[] = [];
    const readiness = createReadiness({
      database: database({ migrationsCurrent: () => new Promise<boolean>(() => undefined) }),
      redis: { ping: async () => 'PONG' },
      now: () => 0,
      logger: memoryLogger(lines),
      checkTimeoutMs: 20,
    });
    expect(await readiness.report()).toEqual({
      ready: false,
      checks: { database: 'fail', migrations: 'unknown', redis: 'ok', shutdown: 'ok' },
      oldestDueDeliveryAgeSeconds: null,
    });
    expect(lines.join('\n')).toContain('no answer within 20 ms');
  });

  it('runs the checks once for probes that arrive together and within the cache time', async () => {
    let clock = 1_000;
    const db = database();
    const readiness = createReadiness({ database: db, now: () => clock, logger: memoryLogger([]) });
    await Promise.all([readiness.report(), readiness.report(), readiness.report()]);
    clock += 999;
    await readiness.report();
    expect(db.runs).toBe(1);
    clock += 1;
    await readiness.report();
    expect(db.runs).toBe(2);
  });

  it('logs a lasting failure once, and its end once', async () => {
    let clock = 0;
    let failing = true;
    const lines: string[] = [];
    const readiness = createReadiness({
      database: database(),
      redis: { ping: async () => (failing ? Promise.reject(new Error('connection refused')) : 'PONG') },
      now: () => clock,
      logger: memoryLogger(lines),
    });
    for (let index = 0; index < 3; index += 1, clock += 1_000) expect((await readiness.report()).checks.redis).toBe('fail');
    failing = false;
    expect((await readiness.report()).ready).toBe(true);
    expect(lines.filter((line) => line.includes('readiness check failed'))).toHaveLength(1);
    expect(lines.filter((line) => line.includes('passes again'))).toHaveLength(1);
  });

  it('says shutting down at once, whatever it cached', async () => {
    const readiness = createReadiness({ database: database(), now: () => 0, logger: memoryLogger([]) });
    expect((await readiness.report()).ready).toBe(true);
    readiness.markShuttingDown();
    expect(await readiness.report()).toMatchObject({ ready: false, checks: { database: 'ok', migrations: 'ok', shutdown: 'fail' } });
  });
});
