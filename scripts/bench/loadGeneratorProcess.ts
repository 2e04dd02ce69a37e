// Runs scripts/bench/loadGenerator.ts in a process of its own and reads its figures (its last line).
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { LoadResult, LoadScenario } from './loadGenerator.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');

/** What a stepped generator prints on a line of its own when it waits for the go-ahead. */
export const generatorSignals = { ready: 'ready', warmedUp: 'warmed-up' } as const;

function spawnGenerator(scenario: LoadScenario, name: string, onLine: (line: string) => void) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'scripts/bench/loadGenerator.ts'), JSON.stringify(scenario)], {
    cwd: repoRoot,
    stdio: [scenario.stepped ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let lines = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    lines += chunk;
    for (let end = lines.indexOf('\n'); end >= 0; end = lines.indexOf('\n')) {
      onLine(lines.slice(0, end));
      lines = lines.slice(end + 1);
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
  const result = new Promise<LoadResult>((resolve, reject) => {
    child.once('error', (error) => reject(new Error(`the load generator failed on ${name}: ${error.message}`)));
    child.once('close', (code, signal) => {
      if (code !== 0) reject(new Error(`the load generator failed on ${name} (${signal ?? `exit ${code}`}): ${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as LoadResult);
    });
  });
  return { child, result };
}

export function runLoadGenerator(scenario: LoadScenario, name: string): Promise<LoadResult> {
  return spawnGenerator({ ...scenario, stepped: false }, name, () => undefined).result;
}

/**
 * A generator that waits for `go()` before its warm-up (once `ready`) and before its measured run
 * (once `warmedUp`, the last go-ahead): started ahead of its turn, it costs no time when its turn
 * comes, and several start their runs together.
 */
export interface SteppedLoadGenerator {
  ready: Promise<void>;
  warmedUp: Promise<void>;
  go(): void;
  result: Promise<LoadResult>;
  /** Kills the process if it still runs (a generator whose turn never came). */
  stop(): void;
}

/** Stepped generators not yet exited: process.exit() (the bench's signal handlers) skips every finally, so they are killed at exit. */
const running = new Set<ChildProcess>();
const killRunning = () => {
  for (const child of running) child.kill('SIGKILL');
};

function signal() {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((resolve_, reject_) => ((resolve = resolve_), (reject = reject_)));
  return { promise, resolve, reject };
}

export function startSteppedLoadGenerator(scenario: LoadScenario, name: string): SteppedLoadGenerator {
  const signalled = { ready: signal(), warmedUp: signal() };
  const { child, result } = spawnGenerator({ ...scenario, stepped: true }, name, (line) => {
    if (line === generatorSignals.ready) signalled.ready.resolve();
    if (line === generatorSignals.warmedUp) signalled.warmedUp.resolve();
  });
  // A generator that fails before a signal fails whoever awaits that signal.
  void result.catch((error: unknown) => {
    signalled.ready.reject(error);
    signalled.warmedUp.reject(error);
  });
  signalled.ready.promise.catch(() => undefined);
  signalled.warmedUp.promise.catch(() => undefined);
  let goes = 0;
  const go = () => {
    child.stdin!.write('go\n');
    if ((goes += 1) === 2) child.stdin!.end();
  };
  running.add(child);
  if (running.size === 1) process.on('exit', killRunning);
  child.once('exit', () => {
    running.delete(child);
    if (running.size === 0) process.off('exit', killRunning);
  });
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  return { ready: signalled.ready.promise, warmedUp: signalled.warmedUp.promise, go, result, stop };
}
