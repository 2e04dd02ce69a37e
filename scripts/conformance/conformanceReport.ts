// The conformance runner's report: every check's result, and from them the coverage (which
// operations a call exercised, which declared statuses were seen) and the verdict, as data for
// --json and as text for a person or a CI log.

import type { ContractOperation } from './contractOperations.js';

export type CheckName =
  | 'example-call'
  | 'setup'
  | 'cleanup'
  | 'no-credential'
  | 'bad-credential'
  | 'insufficient-scope'
  | 'method-not-allowed'
  | 'malformed-parameter'
  | 'malformed-body'
  | 'deleted-resource';

export interface CheckResult {
  /**
   * example-call: the operation's first call, meant to succeed; setup and cleanup: later calls that
   * create, prepare or delete the runner's records; the others: a refusal the contract promises.
   */
  check: CheckName;
  /** The operation, or for method-not-allowed the path. */
  target: string;
  /** The operation whose answer this is (none for method-not-allowed, which no operation declares). */
  operationId?: string;
  request: string;
  /** The status answered (0 when no call was made). */
  status: number;
  /**
   * passed: the answer honours the contract and is what the check asked for (a 2xx for a call meant
   * to succeed). violation: it breaks the contract, or is not the refusal promised. not-exercised:
   * a call meant to succeed was answered with a declared refusal (404 on an id, 409 on a state, 502
   * from a third party), or could not be made: it proves nothing about the operation's success.
   * skipped: the check needs something not given (--limited-token).
   */
  outcome: 'passed' | 'violation' | 'not-exercised' | 'skipped';
  /** What was observed, and for a violation what the contract says instead. */
  detail: string;
}

export interface OperationCoverage {
  operationId: string;
  method: string;
  template: string;
  /** Whether a call of it succeeded (2xx). */
  exercised: boolean;
  /** When not exercised: the answer of its last call meant to succeed, and what the runner tried. */
  reason?: string;
  /** Not exercised, but named by --allow-unexercised. */
  allowed: boolean;
  declaredStatuses: number[];
  /** The declared statuses some check's answer had. */
  seenStatuses: number[];
}

export interface ConformanceReport {
  baseUrl: string;
  api: string;
  version: string;
  /** How many operations the contract has. */
  operations: number;
  /** How many of them a call exercised. */
  exercised: number;
  coverage: OperationCoverage[];
  /** Declared (operation, status) pairs, and how many of them were seen. */
  statuses: { declared: number; seen: number };
  results: CheckResult[];
  passed: number;
  violations: number;
  skipped: number;
  /** Calls that were meant to succeed and did not (their operations may still be exercised by another call). */
  notExercised: number;
  /** Operations not exercised that --allow-unexercised does not name: each fails the run. */
  unexercised: string[];
  /** Operations not exercised that --allow-unexercised names. */
  allowedUnexercised: string[];
  /** The records the runner created, and how many it deleted again. */
  cleanup: { created: number; deleted: number; left: string[] };
  /** No violation, and every operation exercised or allowed not to be. */
  ok: boolean;
}

const isSuccess = (status: number) => status >= 200 && status < 300;
const CALLS_MEANT_TO_SUCCEED = new Set<CheckName>(['example-call', 'setup', 'cleanup']);

export function summarize(run: {
  baseUrl: string;
  api: string;
  version: string;
  operations: ContractOperation[];
  results: CheckResult[];
  notes: Map<string, string[]>;
  allowUnexercised: string[];
  cleanup: ConformanceReport['cleanup'];
}): ConformanceReport {
  const { results } = run;
  const coverage = run.operations.map((operation): OperationCoverage => {
    const own = results.filter((result) => result.operationId === operation.operationId);
    const calls = own.filter((result) => CALLS_MEANT_TO_SUCCEED.has(result.check));
    const exercised = calls.some((result) => isSuccess(result.status));
    const lastFailure = [...calls].reverse().find((result) => result.check !== 'cleanup' && !isSuccess(result.status)) ?? calls.at(-1);
    const reason = exercised
      ? undefined
      : [lastFailure ? `${lastFailure.request} → ${lastFailure.detail}` : 'never called', ...(run.notes.get(operation.operationId) ?? [])].join('; ');
    const seen = new Set(own.map((result) => result.status).filter((status) => operation.declaredStatuses.includes(status)));
    return {
      operationId: operation.operationId,
      method: operation.method,
      template: operation.template,
      exercised,
      ...(reason === undefined ? {} : { reason }),
      allowed: !exercised && (run.allowUnexercised.includes('*') || run.allowUnexercised.includes(operation.operationId)),
      declaredStatuses: operation.declaredStatuses,
      seenStatuses: [...seen].sort((a, b) => a - b),
    };
  });
  const count = (outcome: CheckResult['outcome']) => results.filter((result) => result.outcome === outcome).length;
  const violations = count('violation');
  const unexercised = coverage.filter((entry) => !entry.exercised && !entry.allowed).map((entry) => entry.operationId);
  return {
    baseUrl: run.baseUrl,
    api: run.api,
    version: run.version,
    operations: coverage.length,
    exercised: coverage.filter((entry) => entry.exercised).length,
    coverage,
    statuses: {
      declared: coverage.reduce((sum, entry) => sum + entry.declaredStatuses.length, 0),
      seen: coverage.reduce((sum, entry) => sum + entry.seenStatuses.length, 0),
    },
    results,
    passed: count('passed'),
    violations,
    skipped: count('skipped'),
    notExercised: count('not-exercised'),
    unexercised,
    allowedUnexercised: coverage.filter((entry) => entry.allowed).map((entry) => entry.operationId),
    cleanup: run.cleanup,
    ok: violations === 0 && unexercised.length === 0,
  };
}

/** The report for a person or a CI log: the verdict's reasons first (violations, operations not exercised), then the coverage, then the counts. */
export function formatReport(report: ConformanceReport): string {
  const lines = [`Conformance of ${report.baseUrl} against the ${report.api} contract ${report.version}`];
  const violations = report.results.filter((result) => result.outcome === 'violation');
  if (violations.length > 0) {
    lines.push('', `Violations (${violations.length}):`);
    for (const result of violations) lines.push(`  ✗ ${result.check} ${result.target}: ${result.request}: ${result.detail}`);
  }
  const notExercised = report.coverage.filter((entry) => !entry.exercised);
  if (notExercised.length > 0) {
    lines.push('', `Operations not exercised (${notExercised.length} of ${report.operations}): no call of them succeeded; the answer that stopped each, checked against the contract like any other:`);
    for (const entry of notExercised) lines.push(`  ${entry.allowed ? '-' : '✗'} ${entry.operationId}${entry.allowed ? ' (allowed by --allow-unexercised)' : ''}: ${entry.reason}`);
  }
  const skipped = [...new Set(report.results.filter((result) => result.outcome === 'skipped').map((result) => `${result.check} (${result.detail})`))];
  if (skipped.length > 0) {
    lines.push('', 'Skipped checks:');
    for (const entry of skipped) lines.push(`  - ${entry}`);
  }
  lines.push('', `Declared statuses seen, per operation (${report.statuses.seen} of ${report.statuses.declared} in all):`);
  const width = Math.max(...report.coverage.map((entry) => entry.operationId.length));
  for (const entry of report.coverage) {
    const unseen = entry.declaredStatuses.filter((status) => !entry.seenStatuses.includes(status));
    lines.push(
      `  ${entry.exercised ? '✓' : entry.allowed ? '-' : '✗'} ${entry.operationId.padEnd(width)}  ${String(entry.seenStatuses.length).padStart(2)} of ${String(entry.declaredStatuses.length).padEnd(2)}  seen ${entry.seenStatuses.join(' ') || '(none)'}${unseen.length > 0 ? `; not seen ${unseen.join(' ')}` : ''}`,
    );
  }
  lines.push(
    '',
    report.cleanup.created === 0
      ? 'Records created by the run: none'
      : `Records created by the run: ${report.cleanup.created}, deleted again: ${report.cleanup.deleted}${report.cleanup.left.length > 0 ? `; left: ${report.cleanup.left.join(', ')}` : ''}`,
  );
  lines.push(
    '',
    `Operations exercised: ${report.exercised} of ${report.operations}${report.allowedUnexercised.length > 0 ? ` (${report.allowedUnexercised.length} allowed not to be: ${report.allowedUnexercised.join(', ')})` : ''}`,
    `Declared statuses seen: ${report.statuses.seen} of ${report.statuses.declared}`,
    `Checks: ${report.passed} passed, ${report.violations} violations, ${report.notExercised} calls that did not exercise their operation, ${report.skipped} skipped`,
  );
  const reasons = [
    ...(report.violations > 0 ? [`${report.violations} violation${report.violations === 1 ? '' : 's'}`] : []),
    ...(report.unexercised.length > 0 ? [`${report.unexercised.length} operation${report.unexercised.length === 1 ? '' : 's'} not exercised (${report.unexercised.join(', ')}; name with --allow-unexercised what cannot run here)`] : []),
  ];
  lines.push(report.ok ? 'Result: PASSED' : `Result: FAILED: ${reasons.join('; ')}`);
  return lines.join('\n');
}
