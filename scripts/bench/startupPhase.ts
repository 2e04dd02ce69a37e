// The start-up phase of npm run bench: how long a new server process takes to give its first real answers on an
// existing database, and its memory then, for `npm start` (the sources transpiled by esbuild into .cache/, scripts/runTranspiled.mjs) and for
// `npm run start:production` (the compiled build), each start a process of its own, the two kinds alternating.
import { spawn } from 'node:child_process';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { buildIntoScratchFolder } from '../compiledBuild.js';
import { compiledScriptNodeArguments, npmScriptNodeArguments } from '../npmScriptArguments.js';
import { median } from './median.js';
import { cpuMilliseconds, rssMegabytes } from './processFigures.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const STARTUP_DEADLINE_MS = 60_000;

export type StartKind = 'transpiled' | 'compiled';

/** One start, in milliseconds from spawning the process. */
export interface StartRun {
  /** Until it printed that it listens. */
  listeningMs: number;
  /** Until both first answers (sent the moment it listened) were complete, each a 200. */
  firstAnswersMs: number;
  portfolioMs: number;
  tasksMs: number;
  /** CPU time the process had used by then (all its threads), less sensitive than the others to what else the machine runs. */
  cpuMs: number;
  /** Resident memory right after the first answers. */
  rssMb: number;
}

export interface StartFigures {
  kind: StartKind;
  command: string;
  runs: StartRun[];
  /** Medians of the runs. */
  median: StartRun;
}

export interface StartupFigures {
  /** How long tsc -p tsconfig.build.json took (npm run build). */
  buildSeconds: number;
  starts: StartFigures[];
  /** compiled median ÷ npm start's median. */
  firstAnswersRatio: number;
  cpuRatio: number;
  rssRatio: number;
  /** The machine's 1-minute load average after the starts: wall times stretch with it, CPU times much less. */
  loadAverage: number;
}

export interface StartupCredentials {
  /** A portfolio API key: GET /api/v1/portfolio. */
  portfolioKey: string;
  /** A PAT with tasks:read: GET /v1/tasks?limit=50. */
  token: string;
}

function get(url: string, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: { authorization: `Bearer ${token}` }, agent: false }, (response) => {
      response.resume();
      response.once('end', () => resolve(response.statusCode ?? 0));
    });
    request.once('error', reject);
  });
}

async function startOnce(nodeArguments: string[], databasePath: string, credentials: StartupCredentials): Promise<StartRun> {
  const started = performance.now();
  const child = spawn(process.execPath, nodeArguments, {
    cwd: repoRoot,
    env: { ...process.env, NODE_ENV: 'production', ALLOW_DEMO_DATA_IN_PRODUCTION: 'on', DATABASE_PATH: databasePath, PORT: '0', HOST: '127.0.0.1', LOG_REQUESTS: 'off' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const killAtExit = () => child.kill('SIGKILL');
  process.on('exit', killAtExit);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let output = '';
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const deadline = setTimeout(() => reject(new Error(`the server did not start within ${STARTUP_DEADLINE_MS / 1000} s:\n${output}`)), STARTUP_DEADLINE_MS);
      const read = (chunk: Buffer) => {
        output += chunk.toString();
        const match = /listening on (http:\/\/\S+)/.exec(output);
        if (match) {
          clearTimeout(deadline);
          resolve(match[1]!);
        }
      };
      child.stdout!.on('data', read);
      child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.once('exit', (code) => reject(new Error(`the server exited with ${code} during start-up:\n${output}`)));
    });
    const listeningMs = performance.now() - started;
    const answered = async (path: string, token: string) => {
      const status = await get(`${url}${path}`, token);
      if (status !== 200) throw new Error(`the first GET ${path} answered ${status}:\n${output}`);
      return performance.now() - started;
    };
    const [portfolioMs, tasksMs] = await Promise.all([answered('/api/v1/portfolio', credentials.portfolioKey), answered('/v1/tasks?limit=50', credentials.token)]);
    const cpuMs = cpuMilliseconds(child.pid!);
    const rssMb = rssMegabytes(child.pid!);
    return { listeningMs, firstAnswersMs: Math.max(portfolioMs, tasksMs), portfolioMs, tasksMs, cpuMs, rssMb };
  } finally {
    child.kill('SIGTERM');
    const forced = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(forced);
    process.off('exit', killAtExit);
  }
}

function medianRun(runs: StartRun[]): StartRun {
  const of = (key: keyof StartRun) => Math.round(median(runs.map((run) => run[key])));
  return {
    listeningMs: of('listeningMs'),
    firstAnswersMs: of('firstAnswersMs'),
    portfolioMs: of('portfolioMs'),
    tasksMs: of('tasksMs'),
    cpuMs: of('cpuMs'),
    rssMb: of('rssMb'),
  };
}

/**
 * Builds the compiled server into a scratch folder (not dist/), starts each kind once unmeasured (the database's
 * key files exist afterwards, npm start's transpiled folder is made and the file cache is warm, as on any restart), then `runs`
 * measured starts of each kind, alternating, and stops each start with SIGTERM before the next.
 */
export async function measureStartup(
  databasePath: string,
  credentials: StartupCredentials,
  runs: number,
  /** Where each compiled start writes a CPU profile (node --cpu-prof); its figures then include the profiler's cost. */
  cpuProfileDir?: string,
): Promise<StartupFigures> {
  const build = await buildIntoScratchFolder('bench-');
  try {
    const compiledArguments = compiledScriptNodeArguments('start:production', build.outDir);
    const profiled = cpuProfileDir
      ? [...compiledArguments.slice(0, -1), '--cpu-prof', '--cpu-prof-dir', cpuProfileDir, compiledArguments.at(-1)!]
      : compiledArguments;
    const kinds: { kind: StartKind; command: string; nodeArguments: string[] }[] = [
      { kind: 'transpiled', command: 'npm start', nodeArguments: npmScriptNodeArguments('start') },
      { kind: 'compiled', command: 'npm run start:production', nodeArguments: profiled },
    ];
    for (const { nodeArguments } of kinds) await startOnce(nodeArguments, databasePath, credentials);
    const measured = new Map<StartKind, StartRun[]>(kinds.map(({ kind }) => [kind, []]));
    for (let run = 0; run < runs; run += 1) {
      for (const { kind, nodeArguments } of kinds) measured.get(kind)!.push(await startOnce(nodeArguments, databasePath, credentials));
    }
    const starts = kinds.map(({ kind, command }) => ({ kind, command, runs: measured.get(kind)!, median: medianRun(measured.get(kind)!) }));
    const [transpiled, compiled] = starts as [StartFigures, StartFigures];
    return {
      buildSeconds: Math.round(build.seconds * 10) / 10,
      starts,
      firstAnswersRatio: compiled.median.firstAnswersMs / transpiled.median.firstAnswersMs,
      cpuRatio: compiled.median.cpuMs / transpiled.median.cpuMs,
      rssRatio: compiled.median.rssMb / transpiled.median.rssMb,
      loadAverage: os.loadavg()[0]!,
    };
  } finally {
    build.remove();
  }
}
