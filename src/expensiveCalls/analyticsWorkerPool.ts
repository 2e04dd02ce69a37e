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
import { rmSync } from 'node:fs';
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
  // Under tsx (npm start, tests) the TypeScript source; built, the .js beside this file.
  return new URL(`./analyticsWorker.${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`, import.meta.url);
}

/**
 * What a thread runs: the built module itself; for TypeScript (npm start, tests) the same module
 * bundled once per process with esbuild (tsx's own compiler) into node_modules/.cache, with the parts
 * of its packages it uses (drizzle-orm, tree-shaken); only better-sqlite3 (native) stays an import.
 * Loading drizzle-orm's whole module graph in the thread cost about 3 MB more RSS than the bundle
 * (measured: a thread with one read done, +17 to +20 MB with the packages as imports, +14 to +15 MB
 * bundled; a bare thread with a better-sqlite3 connection is +7 MB). A thread then needs no loader: tsx registered in a thread costs a loader thread
 * of its own (about 20 MB more RSS per thread, measured), and `--import tsx` in a thread's execArgv
 * does not reach its entry module on Node 20.
 */
const bundled = new Map<string, URL>();
function threadEntry(url: URL): URL {
  if (!url.pathname.endsWith('.ts')) return url;
  let entry = bundled.get(url.href);
  if (!entry) {
    const require = createRequire(import.meta.url);
    const esbuild = require('esbuild') as typeof import('esbuild');
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
    const outfile = path.join(root, 'node_modules', '.cache', 'contract-api-server', `${path.basename(url.pathname, '.ts')}-${process.pid}.mjs`);
    esbuild.buildSync({ entryPoints: [fileURLToPath(url)], bundle: true, platform: 'node', format: 'esm', external: ['better-sqlite3'], outfile, logLevel: 'silent' });
    entry = pathToFileURL(outfile);
    bundled.set(url.href, entry);
    process.once('exit', () => rmSync(outfile, { force: true }));
  }
  return entry;
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
