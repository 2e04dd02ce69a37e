import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { npmScriptNodeArguments } from '../../scripts/npmScriptArguments.js';
import { loadDemoData, type DemoFixture } from '../../src/demo/demoData.js';
import { openDatabase } from '../../src/store/database.js';
import { transpiledPath, transpiledSources, withTranspiledImports } from './transpiledSources.js';

/** A database file in a temporary folder, holding the demo data, for server processes to share. */
export interface DemoDatabaseFile {
  dataDir: string;
  databasePath: string;
  fixture: DemoFixture;
  /** Deletes the folder with the database. */
  remove(): void;
}

export async function makeDemoDatabaseFile(folderPrefix: string): Promise<DemoDatabaseFile> {
  const dataDir = mkdtempSync(path.join(tmpdir(), folderPrefix));
  const databasePath = path.join(dataDir, 'app.db');
  const db = openDatabase(databasePath);
  const fixture = await loadDemoData(db, Date.now);
  db.close();
  return { dataDir, databasePath, fixture, remove: () => rmSync(dataDir, { recursive: true, force: true }) };
}

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
}

/**
 * The one way the tests start the server as a child process, for what only a process has (its
 * start-up and refusals, signals, restarts, several processes on one database): `npm start`'s node
 * command (its arguments from package.json: scripts/runTranspiled.mjs and the server's entry) on
 * the given environment; resolves with the URL it prints once listening. `nodeArguments` start another way (the compiled build:
 * compiledScriptNodeArguments), from the repository root or from `cwd` (a project laid out as the
 * Docker image). Everything else starts the app in the test's own process (startTestApp).
 */
export async function startServerProcess(env: Record<string, string>, nodeArguments?: readonly string[], cwd = repoRoot): Promise<ServerProcess> {
  const child = spawnServer(env, nodeArguments ?? npmScriptNodeArguments('start'), cwd);
  return new Promise((resolve, reject) => {
    let output = '';
    // A start that neither listens nor exits fails with what it printed, before the test's own timeout says nothing.
    const deadline = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server printed no listening line within ${START_DEADLINE_MS} ms (pid ${child.pid}); its output:\n${output}`));
    }, START_DEADLINE_MS);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/[^\s]+)/.exec(output);
      if (match) {
        clearTimeout(deadline);
        resolve({ child, url: match[1]!, output: () => output });
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code) => {
      clearTimeout(deadline);
      reject(new Error(`server exited with ${code}: ${output}`));
    });
  });
}

/** Well under the suites' 60 s test timeout; a start takes about a second, a few under a loaded CI run. */
const START_DEADLINE_MS = 40_000;

/** A server process that ran to its end: a refused start, or `--help`. */
export interface ExitedServerProcess {
  /** The exit code; null when a signal ended it (the SIGTERM after `timeoutMs`). */
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout and stderr as they were printed, interleaved. */
  output: string;
}

/**
 * startServerProcess's process run to its end (a refused start, `--help` in `args`); one that starts
 * listening instead is stopped with SIGTERM after `timeoutMs`.
 */
export async function runServerProcess(
  env: Record<string, string>,
  options: { args?: readonly string[]; cwd?: string; timeoutMs?: number; nodeArguments?: readonly string[] } = {},
): Promise<ExitedServerProcess> {
  const cwd = options.cwd ?? repoRoot;
  const nodeArguments = options.nodeArguments ?? npmScriptNodeArguments('start');
  const child = spawnServer({ NODE_OPTIONS: '', ...env }, [...nodeArguments, ...(options.args ?? [])], cwd);
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      output += chunk.toString();
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      output += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGTERM'), options.timeoutMs ?? 60_000);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, output });
    });
  });
}

function spawnServer(env: Record<string, string>, nodeArguments: readonly string[], cwd: string): ChildProcess {
  return spawn(process.execPath, [...nodeArguments], {
    cwd,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', RESPONSE_VALIDATION: 'enforce', LOG_REQUESTS: 'off', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** SIGTERM to each child (a graceful shutdown); resolves with their exit codes. */
export async function stopServerProcesses(children: ChildProcess[]): Promise<(number | null)[]> {
  const exits = children.map(
    (child) =>
      new Promise<number | null>((resolve) => {
        if (child.exitCode !== null) resolve(child.exitCode);
        else child.once('exit', (code) => resolve(code));
      }),
  );
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  return Promise.all(exits);
}

export interface WorkerProcess {
  child: ChildProcess;
  workerId: string;
  /** Everything it has written to stdout and stderr so far. */
  output: () => string;
}

/** `npm run worker` (src/worker.ts, or what `nodeArguments` name) as a child process on `env`; resolves once it has printed that it started. */
export async function startWorkerProcess(env: Record<string, string>, nodeArguments?: readonly string[]): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [...(nodeArguments ?? npmScriptNodeArguments('worker'))], { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Webhook delivery worker (wkr_[A-Za-z0-9]+) started/.exec(output);
      if (match) resolve({ child, workerId: match[1]!, output: () => output });
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code) => reject(new Error(`worker exited with ${code}: ${output}`)));
  });
}

/**
 * `npm run worker` with `args` on `env`, run to its exit (a help text, a refused start); fails after `timeoutMs`, when
 * it is stopped (a worker stopped by SIGTERM exits 0, which must not read as a refusal that ended well).
 */
export async function runWorkerProcess(args: string[], env: Record<string, string> = {}, timeoutMs = 20_000): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...npmScriptNodeArguments('worker'), ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, timeoutMs);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (status) => {
      clearTimeout(timer);
      if (timedOut) reject(new Error(`npm run worker ${args.join(' ')} did not end within ${timeoutMs} ms:\n${stdout}${stderr}`));
      else resolve({ status, stdout, stderr });
    });
  });
}

/**
 * A self-signed certificate for `hostName` (and its key), made by `openssl` for a local TLS
 * receiver. Throws when openssl is missing: the TLS tests need it.
 */
export function selfSignedCertificate(hostName: string): { key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(path.join(tmpdir(), 'test-tls-'));
  try {
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=${hostName}`, '-addext', `subjectAltName=DNS:${hostName}`,
        '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(path.join(dir, 'key.pem')), cert: readFileSync(path.join(dir, 'cert.pem')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ─── The admin CLI and one-off scripts as child processes ───────────────────────────────────────

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
/** tsx's loader as a file URL, so that child processes can use it from any working directory. */
const tsxLoaderUrl = pathToFileURL(path.join(repoRoot, 'node_modules/tsx/dist/loader.mjs')).href;

/** A child process that ran to its end. */
export interface FinishedProcess {
  /** The exit code; 1 when it could not be read. */
  code: number;
  stdout: string;
  stderr: string;
}

export interface ChildOptions {
  /** Working directory; the repository root by default. */
  cwd?: string;
  /** Added to this process's environment (NODE_OPTIONS cleared); `undefined` removes a variable. */
  env?: Record<string, string | undefined>;
  /** Written to the child's stdin, which is then closed. */
  input?: string;
}

function childEnvironment(env: ChildOptions['env']): NodeJS.ProcessEnv {
  return { ...process.env, NODE_OPTIONS: '', ...env };
}

/** `npm run admin -- <args>` as an operator runs it: src/cli/admin.ts transpiled. */
export function runAdminCli(args: readonly string[], options: ChildOptions = {}): Promise<FinishedProcess> {
  return runSourceFile('src/cli/admin.ts', args, options);
}

/**
 * The admin CLI's own entry, runAdmin (src/cli/admin.ts), called in this process with the arguments, environment and
 * working directory a child process would get, its output collected: the same commands, without a second or so of
 * starting node and tsx per call. What only a process has (its exit code, its streams, standard input) is proven by
 * the tests that use runAdminCli.
 */
export function runAdminInProcess(args: readonly string[], options: Omit<ChildOptions, 'input'> = {}): Promise<FinishedProcess> {
  // One at a time, as a queue: two SQLite connections of one thread cannot wait for each other's locks (better-sqlite3's
  // busy wait blocks the thread that holds the other), where two processes would.
  const run = adminRuns.then(() => runAdminNow(args, options));
  adminRuns = run.catch(() => undefined);
  return run;
}

let adminRuns: Promise<unknown> = Promise.resolve();

async function runAdminNow(args: readonly string[], options: Omit<ChildOptions, 'input'>): Promise<FinishedProcess> {
  const { runAdmin } = await import('../../src/cli/admin.js');
  let stdout = '';
  let stderr = '';
  const code = await runAdmin([...args], {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    env: childEnvironment(options.env),
    cwd: options.cwd ?? repoRoot,
    now: Date.now,
  });
  return { code, stdout, stderr };
}

/**
 * A TypeScript entry point of the repository (`src/…`, `scripts/…`) run to its end: from the run's transpiled sources
 * (transpiledSources.ts) when it is one of them, else under tsx as its npm script runs it.
 */
export async function runSourceFile(file: string, args: readonly string[], options: ChildOptions = {}): Promise<FinishedProcess> {
  const transpiled = transpiledPath(transpiledSources(), file);
  const entry = transpiled === undefined ? ['--import', tsxLoaderUrl, path.join(repoRoot, file)] : [transpiled];
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [...entry, ...args],
      { cwd: options.cwd ?? repoRoot, env: childEnvironment(options.env) },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) || 1 : 0, stdout, stderr }),
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

/**
 * An ES module given as source text, run by a node process of its own: for tests where several processes share one
 * database or key file. It may import the TypeScript sources by file URL (see sourceUrl): those are run from the
 * run's transpiled sources (transpiledSources.ts), and any other TypeScript it imports under tsx.
 */
export async function runScriptProcess(source: string, options: ChildOptions = {}): Promise<FinishedProcess> {
  const script = withTranspiledImports(source, transpiledSources());
  const loader = /\.ts["']/.test(script) ? ['--import', tsxLoaderUrl] : [];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...loader, '--input-type=module', '-e', script], {
      cwd: options.cwd ?? repoRoot,
      env: childEnvironment(options.env),
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    if (options.input !== undefined) child.stdin!.end(options.input);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

/** The file URL of a source file of this repository (`src/store/database.ts`), as a JSON string literal for a script's import(). */
export function sourceUrl(repositoryPath: string): string {
  return JSON.stringify(pathToFileURL(path.join(repoRoot, repositoryPath)).href);
}

/** Resolves once the process has printed text matching `pattern` (stdout or stderr); rejects if it exits first. */
export function waitForOutput(server: ServerProcess, pattern: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = pattern.exec(server.output());
      if (!match) return;
      server.child.stdout!.off('data', check);
      server.child.stderr!.off('data', check);
      server.child.off('exit', exited);
      resolve(match);
    };
    const exited = () => reject(new Error(`exited before printing ${pattern}: ${server.output()}`));
    server.child.stdout!.on('data', check);
    server.child.stderr!.on('data', check);
    server.child.once('exit', exited);
    check();
  });
}
