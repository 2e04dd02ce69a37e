// npm run dev: the spec author's loop. Builds the contract, starts the server and watches specs/ and src/; after a
// save it rebuilds what changed and restarts the server.
//
// The server runs as a cluster worker of this process, so that the next one can listen on the same port before the
// running one stops: a restart refuses no request, and a new server that does not start leaves the last good one
// serving. The contract is built in this process (the build's modules stay loaded: about half a second a build,
// against four for a fresh npm run build:contract); the workers accept connections themselves (SCHED_NONE), so a
// build here never holds up a request.
import cluster, { type Worker } from 'node:cluster';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { npmScriptNodeArguments } from './npmScriptArguments.js';

const HELP = `Usage: npm run dev [-- --help]

The spec author's loop: builds the contract (as npm run build:contract), starts the server (as npm start)
and watches specs/ and src/. After each save:
  - a change under specs/ rebuilds generated/ and then restarts the server; so does a handler file added
    or removed under src/<api>/operations/ (the build checks that every operation has one);
  - any other change under src/ restarts the server.
The new server starts beside the running one and takes over once it serves, so no request is refused in
between. A build error, or a server that does not start, is printed, and the last good server keeps
serving until a later save fixes it. Each restart prints the time from the save to serving.

Ctrl-C (SIGINT) or SIGTERM stops the server gracefully, then the loop; a second Ctrl-C kills the server.
A change under scripts/ (the build itself) takes effect when npm run dev is started again.

Environment: as npm start (npm start -- --help lists it); the server listens on PORT (default 3000).`;

const projectRoot = path.resolve(import.meta.dirname, '..');
/** How long a burst of file events (an editor's save writes, renames, deletes) must be quiet before a rebuild. */
const QUIET_MS = 50;
/** How long a new server may take to serve before it is given up (killed), the last good one serving on. */
const START_TIMEOUT_MS = 90_000;
/** How long stopping may take before the servers are killed (a server lets a webhook attempt finish: up to 15 s). */
const STOP_TIMEOUT_MS = 20_000;

const say = (line: string) => process.stdout.write(`[dev] ${line}\n`);
const complain = (line: string) => process.stderr.write(`[dev] ${line}\n`);
const relative = (file: string) => path.relative(projectRoot, file).split(path.sep).join('/');

/** The files whose change matters: spec YAML and JSON, server sources; never editors' swap and backup files, nor builds. */
export function isWatchedFile(relativePath: string): boolean {
  const segments = relativePath.split('/');
  const name = segments.at(-1) ?? '';
  if (segments.some((segment) => segment.startsWith('.') || segment === 'node_modules' || segment === 'dist')) return false;
  if (segments[0] === 'specs') return /\.(ya?ml|json)$/.test(name);
  if (segments[0] === 'src') return segments[1] !== 'client' && /\.(m|c)?(ts|js)$|\.json$/.test(name);
  return false;
}

/** Whether a change needs the contract rebuilt: a spec, or the set of handler files the build checks. */
function needsContractBuild(relativePath: string): boolean {
  return relativePath.startsWith('specs/') || /^src\/[^/]+\/operations\//.test(relativePath);
}

type Build = typeof import('./contract/build.js');
type BuildOptions = import('./contract/build.js').BuildOptions;
type Problems = typeof import('./contract/problems.js');

/** The APIs of the changed spec files, or undefined (every API) when a change lies outside specs/<api>/ or names an API that is gone. */
function apisChangedIn(changes: readonly string[]): string[] | undefined {
  const apis = new Set<string>();
  for (const change of changes) {
    const api = /^specs\/([^/]+)\/./.exec(change)?.[1];
    if (api === undefined || !fs.existsSync(path.join(projectRoot, 'specs', api, 'openapi.yaml'))) return undefined;
    apis.add(api);
  }
  return [...apis];
}
async function main(args: string[]): Promise<number> {
  let help: boolean | undefined;
  try {
    ({ values: { help } } = parseArgs({ args, options: { help: { type: 'boolean', short: 'h' } }, strict: true }));
  } catch (error) {
    complain(`${(error as Error).message}\n\n${HELP}`);
    return 2;
  }
  if (help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }

  say(`npm run dev in ${projectRoot}: watching specs/ and src/. Ctrl-C stops.`);
  say('loading the contract build…');
  const [build, { ContractBuildError }]: [Build, Problems] = await Promise.all([import('./contract/build.js'), import('./contract/problems.js')]);

  cluster.schedulingPolicy = cluster.SCHED_NONE;
  cluster.setupPrimary({ exec: path.join(projectRoot, 'src/server.ts'), execArgv: npmScriptNodeArguments('start').slice(0, -1), cwd: projectRoot });

  /** The server that serves now. */
  let serving: Worker | undefined;
  /** Servers told to stop (replaced, or at the end): their exit is expected. */
  const retiring = new Set<Worker>();
  let contractBroken = false;
  let stopping = false;

  /**
   * Builds into generated/ (`options`: which APIs, whether types.ts); false (with the problems printed) when the
   * specs do not build.
   */
  const buildContract = async (options: BuildOptions = {}): Promise<boolean> => {
    const started = performance.now();
    try {
      const files = await build.buildContracts(projectRoot, options);
      const written = build.writeGeneratedFiles(projectRoot, files);
      const what = options.types === false ? 'contract built (types.ts follows)' : 'contract built';
      say(`${what} in ${Math.round(performance.now() - started)} ms: ${written.length === 0 ? 'generated/ unchanged' : written.map((file) => file.path).join(', ')}`);
      contractBroken = false;
      return true;
    } catch (error) {
      contractBroken = true;
      complain(error instanceof ContractBuildError ? error.message : `the contract build failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      complain(serving ? `generated/ is unchanged and the last good server (pid ${serving.process.pid}) keeps serving; fix the spec and save.` : 'no server is running; fix the spec and save.');
      return false;
    }
  };

  /** Starts a server beside the running one; once it serves, the running one is stopped. */
  const startServer = (savedAt: number | undefined): Promise<void> =>
    new Promise((resolve) => {
      const worker = cluster.fork();
      const giveUp = setTimeout(() => {
        complain(`the new server (pid ${worker.process.pid}) did not serve within ${START_TIMEOUT_MS / 1000} s: stopping it.`);
        stopServer(worker, 'SIGKILL');
      }, START_TIMEOUT_MS);
      const onMessage = (message: unknown) => {
        if (typeof message !== 'object' || message === null || (message as { kind?: unknown }).kind !== 'server-ready') return;
        clearTimeout(giveUp);
        worker.off('message', onMessage);
        worker.off('exit', onEarlyExit);
        const previous = serving;
        serving = worker;
        if (previous) stopServer(previous);
        const { url, publicBaseUrl } = message as { url: string; publicBaseUrl: string };
        const timing = savedAt === undefined ? '' : `, ${Math.round(performance.now() - savedAt)} ms after the save`;
        say(`serving ${url} (server pid ${worker.process.pid}${previous ? `, replacing pid ${previous.process.pid}` : ''}${timing}); reference: ${publicBaseUrl}/v1/docs`);
        resolve();
      };
      const onEarlyExit = (code: number | null, signal: string | null) => {
        clearTimeout(giveUp);
        worker.off('message', onMessage);
        if (!stopping) {
          complain(`the new server exited before serving (${signal ?? `exit code ${code}`}); ${serving ? `the last good server (pid ${serving.process.pid}) keeps serving` : 'no server is running'}: fix it and save.`);
        }
        resolve();
      };
      worker.on('message', onMessage);
      worker.once('exit', onEarlyExit);
      worker.once('exit', (code, signal) => {
        if (retiring.delete(worker) || stopping) return;
        if (serving === worker) {
          serving = undefined;
          complain(`the server (pid ${worker.process.pid}) exited (${signal ?? `exit code ${code}`}); save a file to start it again.`);
        }
      });
    });

  const stopServer = (worker: Worker, signal: NodeJS.Signals = 'SIGTERM') => {
    retiring.add(worker);
    // By its pid: this loop's own child, nothing else.
    if (worker.process.exitCode === null && worker.process.signalCode === null) worker.process.kill(signal);
  };

  // ── the loop: changes collected while a rebuild runs are handled right after it ──
  const pending = new Set<string>();
  let firstChangeAt: number | undefined;
  let quietTimer: NodeJS.Timeout | undefined;
  let cycle: Promise<void> | undefined;

  const handleChanges = async () => {
    while (pending.size > 0 && !stopping) {
      const changes = [...pending].sort();
      const savedAt = firstChangeAt;
      pending.clear();
      firstChangeAt = undefined;
      say(`changed: ${changes.length > 4 ? `${changes.slice(0, 4).join(', ')} and ${changes.length - 4} more` : changes.join(', ')}`);
      if (!contractBroken && !changes.some(needsContractBuild)) {
        await startServer(savedAt);
        continue;
      }
      // The APIs whose spec folder changed; every API after a failed build or another change. types.ts (openapi-typescript,
      // about half the build) is read by the compiler only: it is rendered once the new server serves.
      const apis = contractBroken ? undefined : apisChangedIn(changes);
      if (!(await buildContract({ apis, types: false }))) continue;
      if (stopping) break;
      await startServer(savedAt);
      if (!stopping) await buildContract({ apis });
    }
  };
  const onFileEvent = (folder: string, filename: string | null) => {
    if (stopping || filename === null) return;
    const changed = `${folder}/${filename.split(path.sep).join('/')}`;
    if (!isWatchedFile(changed)) return;
    firstChangeAt ??= performance.now();
    pending.add(changed);
    clearTimeout(quietTimer);
    quietTimer = setTimeout(() => {
      if (cycle) return; // the running cycle takes the new changes when it is done
      cycle = handleChanges().finally(() => (cycle = undefined));
    }, QUIET_MS);
  };
  const watchers = ['specs', 'src'].map((folder) => {
    const watcher = fs.watch(path.join(projectRoot, folder), { recursive: true }, (_event, filename) => onFileEvent(folder, filename));
    watcher.on('error', (error) => complain(`watching ${folder}/ failed: ${error.message}`));
    return watcher;
  });

  // ── stopping: Ctrl-C reaches the server too (same process group); SIGTERM reaches only this process ──
  const stopped = new Promise<number>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        complain(`${signal} again: killing the server.`);
        for (const worker of Object.values(cluster.workers ?? {})) if (worker) stopServer(worker, 'SIGKILL');
        return;
      }
      stopping = true;
      say(`${signal}: stopping the server…`);
      clearTimeout(quietTimer);
      for (const watcher of watchers) watcher.close();
      const workers = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined);
      const exits = workers.map((worker) => new Promise<void>((done) => (worker.process.exitCode !== null || worker.process.signalCode !== null ? done() : worker.process.once('exit', () => done()))));
      for (const worker of workers) stopServer(worker);
      const kill = setTimeout(() => {
        complain(`the server did not stop within ${STOP_TIMEOUT_MS / 1000} s: killing it.`);
        for (const worker of workers) stopServer(worker, 'SIGKILL');
      }, STOP_TIMEOUT_MS);
      void Promise.all(exits).then(() => {
        clearTimeout(kill);
        say('stopped.');
        resolve(0);
      });
    };
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGTERM', () => stop('SIGTERM'));
  });

  // The first build and server, as after a save of everything.
  cycle = (async () => {
    if (await buildContract()) await startServer(undefined);
  })().finally(() => (cycle = undefined));
  await cycle;
  if (pending.size > 0 && !stopping) cycle = handleChanges().finally(() => (cycle = undefined));
  return stopped;
}

if (cluster.isPrimary) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      complain(`npm run dev failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      process.exit(1);
    },
  );
}
