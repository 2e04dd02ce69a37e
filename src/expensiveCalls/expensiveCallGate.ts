import { ServiceError } from '../serviceError.js';

// The door in front of expensive calls (operations whose x-ratelimit-cost is above 1, the
// analytics): at most `running` of them run at once in the process (SQLite: one per worker thread;
// PostgreSQL: a share of the connection pool), at most `queued` more wait in arrival order, and one
// workspace has at most `perWorkspace` of them in flight (running or waiting), so that a few busy
// workspaces cannot fill the queue for everybody. A call beyond a cap is refused at once, never
// made to wait: the API answers it 429 with Retry-After (ConcurrencyCapError).

export type ConcurrencyCap = 'workspace' | 'queue';

/** A call refused by the gate: its workspace's calls in flight, or the process's queue, were full. */
export class ConcurrencyCapError extends ServiceError {
  readonly kind = 'concurrency-cap';
  constructor(
    readonly cap: ConcurrencyCap,
    readonly limit: number,
  ) {
    super(cap === 'workspace' ? `the workspace has ${limit} expensive calls in flight` : `${limit} expensive calls wait already`);
  }
}

export interface ExpensiveCallLimits {
  /** Calls that run at once. */
  running: number;
  /** Calls that wait for a running one to end; beyond them, calls are refused. */
  queued: number;
  /** Calls of one workspace in flight (running or waiting). */
  perWorkspace: number;
}

export interface ExpensiveCallGate {
  readonly limits: ExpensiveCallLimits;
  /** Runs `call` when a place is free; throws ConcurrencyCapError at once when a cap is met. */
  run<T>(workspaceId: string, call: () => Promise<T>): Promise<T>;
  /** Calls running and waiting now (tests, and the bench's report). */
  load(): { running: number; waiting: number; workspaces: number };
}

export function createExpensiveCallGate(limits: ExpensiveCallLimits): ExpensiveCallGate {
  const running = Math.max(1, limits.running);
  const inFlight = new Map<string, number>();
  const waiting: (() => void)[] = [];
  let active = 0;

  const release = (workspaceId: string) => {
    const left = (inFlight.get(workspaceId) ?? 1) - 1;
    if (left === 0) inFlight.delete(workspaceId);
    else inFlight.set(workspaceId, left);
    const next = waiting.shift();
    if (next) next();
    else active -= 1;
  };

  return {
    limits: { ...limits, running },
    async run(workspaceId, call) {
      const ofWorkspace = inFlight.get(workspaceId) ?? 0;
      if (ofWorkspace >= limits.perWorkspace) throw new ConcurrencyCapError('workspace', limits.perWorkspace);
      if (active >= running && waiting.length >= limits.queued) throw new ConcurrencyCapError('queue', limits.queued);
      inFlight.set(workspaceId, ofWorkspace + 1);
      // A place is handed over by release() without `active` going down, so no call can pass a waiting one.
      if (active < running) active += 1;
      else await new Promise<void>((resolve) => waiting.push(resolve));
      try {
        return await call();
      } finally {
        release(workspaceId);
      }
    },
    load: () => ({ running: active, waiting: waiting.length, workspaces: inFlight.size }),
  };
}
