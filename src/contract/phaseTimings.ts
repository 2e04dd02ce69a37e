// Where a request's time goes, phase by phase and per operation: kept only when asked for
// (PHASE_TIMINGS_FILE; the bench's per-request budget). Not asked for, a phase costs one branch.

/** The pipeline's steps as timed: route covers screen, route, identify and authenticate (up to the operation's own steps). */
export const pipelinePhases = ['route', 'admit', 'idempotency', 'validate', 'handler', 'encode', 'write'] as const;
export type PipelinePhase = (typeof pipelinePhases)[number];

export interface PhaseTimings {
  /** Adds the time from `since` (process.hrtime.bigint()) to now to a phase of an operation; returns now. */
  add(operationId: string, phase: PipelinePhase, since: bigint): bigint;
  /** Counts one call of an operation, from `since` (its arrival) to now. */
  call(operationId: string, since: bigint): void;
  /** Microseconds per call, by operation and phase; `other` is the call's time no phase covers (the adapter, awaits between steps). */
  budget(): OperationBudget[];
}

export interface OperationBudget {
  operationId: string;
  calls: number;
  microsecondsPerCall: Record<PipelinePhase | 'other' | 'total', number>;
}

export function createPhaseTimings(): PhaseTimings {
  const operations = new Map<string, { calls: number; total: bigint; phases: Map<PipelinePhase, bigint> }>();
  const entry = (operationId: string) => {
    let found = operations.get(operationId);
    if (!found) {
      found = { calls: 0, total: 0n, phases: new Map() };
      operations.set(operationId, found);
    }
    return found;
  };
  return {
    add(operationId, phase, since) {
      const now = process.hrtime.bigint();
      const { phases } = entry(operationId);
      phases.set(phase, (phases.get(phase) ?? 0n) + (now - since));
      return now;
    },
    call(operationId, since) {
      const found = entry(operationId);
      found.calls += 1;
      found.total += process.hrtime.bigint() - since;
    },
    budget() {
      return [...operations.entries()]
        .filter(([, { calls }]) => calls > 0)
        .map(([operationId, { calls, total, phases }]) => {
          const perCall = (nanoseconds: bigint) => Math.round(Number(nanoseconds) / calls / 100) / 10;
          const covered = [...phases.values()].reduce((sum, value) => sum + value, 0n);
          const microsecondsPerCall = Object.fromEntries(pipelinePhases.map((phase) => [phase, perCall(phases.get(phase) ?? 0n)])) as OperationBudget['microsecondsPerCall'];
          microsecondsPerCall.other = perCall(total - covered);
          microsecondsPerCall.total = perCall(total);
          return { operationId, calls, microsecondsPerCall };
        });
    },
  };
}
