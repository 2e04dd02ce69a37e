// A child process of the bench started as an npm script starts it (its node arguments from
// package.json), ready once its output matches a banner line, stopped with SIGTERM and killed if
// it outlives a deadline or the bench itself.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { npmScriptEnvironment, npmScriptNodeArguments } from '../npmScriptArguments.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const STARTUP_DEADLINE_MS = 60_000;

export interface BenchProcess {
  child: ChildProcess;
  /** The banner line's match (its groups carry what the process announced, e.g. its URL). */
  ready: RegExpExecArray;
  /** SIGTERM, then SIGKILL when the process has not exited within `stopDeadlineMs`; resolves once it exited. */
  stop(): Promise<void>;
}

export async function startBenchProcess(options: {
  /** An npm script (its node arguments from package.json), or a TypeScript file run with tsx and plain node. */
  script: 'start' | 'worker' | { file: string; args: string[] };
  /** Node options before the script's own, e.g. `['--cpu-prof', '--cpu-prof-dir', dir]`. */
  nodeArguments?: string[];
  env: Record<string, string>;
  ready: RegExp;
  /** What the process is, for error messages. */
  name: string;
  stopDeadlineMs: number;
}): Promise<BenchProcess> {
  const scriptArguments =
    typeof options.script === 'string' ? npmScriptNodeArguments(options.script) : ['--import', 'tsx', options.script.file, ...options.script.args];
  const child = spawn(process.execPath, [...(options.nodeArguments ?? []), ...scriptArguments], {
    cwd: repoRoot,
    // The bench serves the demo data set in production mode: confirmed, as an operator would have to.
    env: { ...process.env, ...(typeof options.script === 'string' ? npmScriptEnvironment(options.script) : {}), NODE_ENV: 'production', ALLOW_DEMO_DATA_IN_PRODUCTION: 'on', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // process.exit() (the bench's signal handlers, a crash) skips every finally: no child may outlive the bench.
  const killAtExit = () => child.kill('SIGKILL');
  process.on('exit', killAtExit);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let startup = '';
  let errors = '';
  let ready: RegExpExecArray | null = null;
  // Output after start-up (a worker logs a line per delivery) is read and dropped: a full pipe would stall the child.
  child.stdout!.on('data', (chunk: Buffer) => {
    if (!ready) startup += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    errors = (errors + chunk.toString()).slice(-4000);
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), options.stopDeadlineMs);
      await exited;
      clearTimeout(timer);
    }
    process.off('exit', killAtExit);
  };
  try {
    ready = await new Promise<RegExpExecArray>((resolve, reject) => {
      const deadline = Date.now() + STARTUP_DEADLINE_MS;
      const timer = setInterval(() => {
        const match = options.ready.exec(startup);
        if (match) {
          clearInterval(timer);
          resolve(match);
        } else if (child.exitCode !== null || child.signalCode !== null) {
          clearInterval(timer);
          reject(new Error(`${options.name} exited during start-up:\n${startup}${errors}`));
        } else if (Date.now() > deadline) {
          clearInterval(timer);
          reject(new Error(`${options.name} did not start within ${STARTUP_DEADLINE_MS / 1000} s:\n${startup}${errors}`));
        }
      }, 20);
    });
  } catch (error) {
    await stop();
    throw error;
  }
  startup = '';
  return { child, ready, stop };
}

/** A reference server of scripts/bench/referenceServer.ts (its kind first in `args`), ready once listening: `ready[1]` is its URL. */
export function startReferenceServer(args: string[]): Promise<BenchProcess> {
  return startBenchProcess({
    script: { file: path.join(repoRoot, 'scripts/bench/referenceServer.ts'), args },
    env: {},
    ready: /listening on (http:\/\/\S+)/,
    name: `the ${args.join(' ')} reference`,
    stopDeadlineMs: 5_000,
  });
}
