// The analytics store on SQLite, run in a small pool of worker threads (node:worker_threads), each
// with its own read-only connection (analyticsWorker.ts): an aggregate over 100,000 tasks takes
// 50 to 300 ms of synchronous SQLite, which on the request loop would hold every other request
// for that long. The handlers stay on the main thread (they are cheap); only the store's reads
// travel. The gate in front of the expensive operations (expensiveCallGate.ts) keeps at most one
// call per thread running, so a read seldom waits here; when it does, it waits in arrival order.
//
// Threads start on the first read (a server that never answers analytics starts none), keep the
// process alive only while they run a read (unref when idle), and are terminated by close(). A thread that dies (a crash, an
// out-of-memory end) fails the read it was running with AnalyticsWorkerCrashedError (a 500
// problem whose body names nothing of it) and is replaced on the next read.
import { createRequire } from 'node:module';
import { createHash } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { AnalyticsStore } from '../store/analytics.js';
import type { AnalyticsMethod, AnalyticsRequest, AnalyticsResponse, AnalyticsWorkerData } from './analyticsWorker.js';
import { ServiceError } from '../serviceError.js';

export interface AnalyticsWorkerPoolOptions {
  databasePath: string;
  /** Threads at most. */
  threads: number;
  /** Each thread's SQLite busy timeout (a read waits for a checkpoint at most this long). */
  busyTimeoutMs: number;
  /** Old-generation heap of each thread, MB (RSS stays bounded). */
  maxHeapMb?: number;
  /** The thread's module (tests inject one that fails). */
  workerUrl?: URL;
}

export interface AnalyticsWorkerPool {
  /** The analytics store whose every read runs in a thread. */
  readonly store: AnalyticsStore;
  /** Threads alive now. */
  threads(): number;
  /** Ends every thread; reads still waiting or running fail. */
  close(): Promise<void>;
}

/** A thread ended while it ran a read: the read's answer is a 500, its cause stays in the log. */
export class AnalyticsWorkerCrashedError extends Error {
  constructor(exitCode: number | undefined) {
    super(`an analytics worker thread ended${exitCode === undefined ? '' : ` with exit code ${exitCode}`} while it ran a read`);
  }
}

/** An error a thread answered, with SQLite's code kept (a busy database still answers 503). */
export class AnalyticsWorkerError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

export class AnalyticsPoolClosedError extends ServiceError {
  readonly kind = 'analytics-pool-closed';
  constructor() {
    super('the analytics worker pool is closed');
  }
}

interface PendingRead {
  request: AnalyticsRequest;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

interface Thread {
  worker: Worker;
  running: PendingRead | undefined;
}

const methods: readonly AnalyticsMethod[] = ['hasProject', 'hasUser', 'tasksCreated', 'tasksCompleted', 'cycleTimes', 'overdue', 'pipeline'];

function defaultWorkerUrl(): URL {
  // As TypeScript (tests, npm run dev) the source; transpiled (npm start) or built, the .js beside this file.
  return new URL(`./analyticsWorker.${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`, import.meta.url);
}

/**
 * What a thread runs: the transpiled or built module itself, its packages as imports; for TypeScript (tests, npm run dev) the same module
 * bundled with esbuild (tsx's own compiler) into node_modules/.cache, with the parts
 * of its packages it uses (drizzle-orm, tree-shaken); only better-sqlite3 (native) stays an import.
 * Loading drizzle-orm's whole module graph in the thread cost about 3 MB more RSS than the bundle
 * (measured: a thread with one read done, +17 to +20 MB with the packages as imports, +14 to +15 MB
 * bundled; a bare thread with a better-sqlite3 connection is +7 MB). A thread then needs no loader: tsx registered in a thread costs a loader thread
 * of its own (about 20 MB more RSS per thread, measured), and `--import tsx` in a thread's execArgv
 * does not reach its entry module on Node 20.
 *
 * The bundle is made once for the files it is made of (their paths, sizes and change times), not at each start: it was
 * about a sixth of a start's CPU. Each process runs a link of its own to it, removed at exit, so that a process that
 * made a newer bundle may delete the older ones.
 */
const bundled = new Map<string, URL>();
function threadEntry(url: URL): URL {
  if (!url.pathname.endsWith('.ts')) return url;
  let entry = bundled.get(url.href);
  if (!entry) {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
    const folder = path.join(root, 'node_modules', '.cache', 'contract-api-server');
    const name = path.basename(url.pathname, '.ts');
    const own = path.join(folder, `${name}-${process.pid}.mjs`);
    const source = fileURLToPath(url);
    const bundle = currentBundle(source, folder, name);
    removeLinksOfEndedProcesses(folder, name);
    rmSync(own, { force: true });
    try {
      linkSync(bundle, own);
    } catch (error) {
      // Another process, started after a source changed, replaced the bundle meanwhile: take the current one.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      linkSync(currentBundle(source, folder, name), own);
    }
    entry = pathToFileURL(own);
    bundled.set(url.href, entry);
    process.once('exit', () => rmSync(own, { force: true }));
  }
  return entry;
}

/** The bundle of `source` made from its files as they are now: the kept one, or one made now. */
export function currentBundle(source: string, folder: string, name: string): string {
  const inputsFile = path.join(folder, `${name}.inputs.json`);
  const bundleOf = (key: string) => path.join(folder, `${name}.${key}.mjs`);
  const kept = readInputs(inputsFile);
  if (kept) {
    const key = inputsKey(kept);
    if (key !== undefined && existsSync(bundleOf(key))) return bundleOf(key);
  }
  mkdirSync(folder, { recursive: true });
  const require = createRequire(import.meta.url);
  const esbuild = require('esbuild') as typeof import('esbuild');
  const made = esbuild.buildSync({ entryPoints: [source], bundle: true, platform: 'node', format: 'esm', external: ['better-sqlite3'], write: false, metafile: true, logLevel: 'silent' });
  const inputs = Object.keys(made.metafile.inputs).map((input) => path.resolve(input));
  const key = inputsKey(inputs) ?? `${process.pid}`;
  for (const file of readdirSync(folder)) if (file.startsWith(`${name}.`) && file.endsWith('.mjs') && file !== path.basename(bundleOf(key))) rmSync(path.join(folder, file), { force: true });
  // Written whole, then renamed: a process starting meanwhile sees the old files or the new ones.
  writeAtomically(bundleOf(key), made.outputFiles[0]!.contents);
  writeAtomically(inputsFile, JSON.stringify(inputs));
  return bundleOf(key);
}

/** The links of processes that ended without their exit handler (killed): `<name>-<pid>.mjs` of a pid that is gone. */
function removeLinksOfEndedProcesses(folder: string, name: string): void {
  const link = new RegExp(`^${name}-(\\d+)\\.mjs$`);
  for (const file of readdirSync(folder)) {
    const pid = link.exec(file)?.[1];
    if (pid === undefined) continue;
    try {
      process.kill(Number(pid), 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') rmSync(path.join(folder, file), { force: true });
    }
  }
}

function readInputs(file: string): string[] | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as string[];
  } catch {
    return undefined;
  }
}

/** A name for these files as they are now; none when one of them is gone. */
function inputsKey(inputs: readonly string[]): string | undefined {
  const hash = createHash('sha256');
  for (const input of inputs) {
    let stats;
    try {
      stats = statSync(input);
    } catch {
      return undefined;
    }
    hash.update(`${input}\0${stats.size}\0${stats.mtimeMs}\n`);
  }
  return hash.digest('base64url').slice(0, 16);
}

function writeAtomically(file: string, contents: string | Uint8Array): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, contents);
  renameSync(temporary, file);
}

export function createAnalyticsWorkerPool(options: AnalyticsWorkerPoolOptions): AnalyticsWorkerPool {
  const size = Math.max(1, options.threads);
  const entry = threadEntry(options.workerUrl ?? defaultWorkerUrl());
  const threads: Thread[] = [];
  const waiting: PendingRead[] = [];
  let nextId = 1;
  let closed = false;

  const startThread = (): Thread => {
    const worker = new Worker(entry, {
      workerData: { databasePath: options.databasePath, busyTimeoutMs: options.busyTimeoutMs } satisfies AnalyticsWorkerData,
      // The server's own node flags (heap sizes) are not a thread's.
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb ?? 32, maxYoungGenerationSizeMb: 2 },
      stdout: false,
      stderr: false,
    });
    worker.unref();
    const thread: Thread = { worker, running: undefined };
    worker.on('message', (response: AnalyticsResponse) => {
      const read = thread.running;
      if (!read || read.request.id !== response.id) return;
      thread.running = undefined;
      worker.unref();
      if ('error' in response) read.reject(new AnalyticsWorkerError(response.error.message, response.error.code));
      else read.resolve(response.value);
      dispatch();
    });
    // 'error' (an uncaught exception in the thread) is followed by 'exit'.
    worker.on('error', () => undefined);
    worker.on('exit', (exitCode) => {
      const index = threads.indexOf(thread);
      if (index >= 0) threads.splice(index, 1);
      const read = thread.running;
      thread.running = undefined;
      read?.reject(closed ? new AnalyticsPoolClosedError() : new AnalyticsWorkerCrashedError(exitCode));
      if (!closed) dispatch();
    });
    threads.push(thread);
    return thread;
  };

  const dispatch = () => {
    while (waiting.length > 0) {
      let thread = threads.find((candidate) => candidate.running === undefined);
      if (!thread && threads.length < size) thread = startThread();
      if (!thread) return;
      const read = waiting.shift()!;
      thread.running = read;
      // Referenced while it runs a read (its caller waits for it), unreferenced when idle.
      thread.worker.ref();
      thread.worker.postMessage(read.request);
    }
  };

  const call = (method: AnalyticsMethod, args: unknown[]): Promise<unknown> => {
    if (closed) return Promise.reject(new AnalyticsPoolClosedError());
    return new Promise((resolve, reject) => {
      waiting.push({ request: { id: nextId++, method, args }, resolve, reject });
      dispatch();
    });
  };

  // A range travels as its four numbers and size, not with its list of buckets.
  const range = (value: unknown) => {
    const { workspaceId, from, to, bucket } = value as { workspaceId: string; from: number; to: number; bucket: string };
    return { workspaceId, from, to, bucket };
  };
  const store = Object.fromEntries(
    methods.map((method) => [
      method,
      (...args: unknown[]) => call(method, method === 'hasProject' || method === 'hasUser' ? args : [range(args[0]), ...args.slice(1)]),
    ]),
  ) as unknown as AnalyticsStore;

  return {
    store,
    threads: () => threads.length,
    async close() {
      closed = true;
      for (const read of waiting.splice(0)) read.reject(new AnalyticsPoolClosedError());
      await Promise.all(threads.map((thread) => thread.worker.terminate()));
    },
  };
}
