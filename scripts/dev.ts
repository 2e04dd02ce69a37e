// npm run dev: the spec author's loop. Builds the contract, starts the server and watches specs/ and src/; after a
// save it rebuilds what changed and restarts the server.
//
// The server runs as a cluster worker of this process, so that the next one can listen on the same port before the
// running one stops: a restart refuses no request, and a new server that does not start leaves the last good one
// serving. The next server is started ahead of time and waits with its modules loaded (two thirds of a start under
// tsx); a spec save then costs a build and the rest of a start. A source save, or a build that changes a generated
// module (rules.ts), needs a fresh server. The contract is built in this process (the build's modules stay loaded: about half a second a build,
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
between; the next one waits with its modules loaded, so that a spec save restarts faster. A build error, or a server that does not start, is printed, and the last good server keeps
serving until a later save fixes it. Each restart prints the time from the save to serving.

Ctrl-C (SIGINT) or SIGTERM stops the server gracefully, then the loop; a second Ctrl-C kills the server.
A change under scripts/ (the build itself) takes effect when npm run dev is started again.

Environment: as npm start (npm start -- --help lists it); the server listens on PORT (default 3000).`;

const projectRoot = path.resolve(import.meta.dirname, '..');
/** How long a burst of file events (an editor's save writes, renames, deletes) must be quiet before a rebuild. */
const QUIET_MS = 50;
/** A second signal within this long of the first is the same Ctrl-C, delivered twice (see stop). */
const SAME_SIGNAL_MS = 1_000;
/** How long the saves must pause before types.ts is rendered. */
const TYPES_AFTER_MS = 2_000;
/** How long a new server may take to serve before it is given up (killed), the last good one serving on. */
const START_TIMEOUT_MS = 90_000;
/** How long a replaced server may take to stop listening before the new one is announced anyway. */
const RETIRE_TIMEOUT_MS = 1_000;
/** How long stopping may take before the servers are killed (a server lets a webhook attempt finish: up to 15 s). */
const STOP_TIMEOUT_MS = 20_000;
/**
 * What every server this loop starts is given beside the environment: no SHUTDOWN_DELAY_MS, whatever the shell sets. A
 * replaced server must stop listening at once (the loop announces the new one only then), and no load balancer here
 * needs the time to notice.
 */
const DEV_SERVER_ENV = { SHUTDOWN_DELAY_MS: '0' };

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

/** A file's modification time (ms since the epoch), or undefined when it is gone. */
function modifiedAt(relativePath: string): number | undefined {
  try {
    return fs.statSync(path.join(projectRoot, relativePath)).mtimeMs;
  } catch {
    return undefined;
  }
}

const HANDLER_FILE = /^src\/[^/]+\/operations\/[^/]+\.ts$/;

/** The handler files there are now (the build checks that every operation has one and every one an operation). */
function handlerFiles(): Set<string> {
  const found = new Set<string>();
  for (const api of fs.readdirSync(path.join(projectRoot, 'src'), { withFileTypes: true })) {
    const folder = path.join(projectRoot, 'src', api.name, 'operations');
    if (!api.isDirectory() || !fs.existsSync(folder)) continue;
    for (const file of fs.readdirSync(folder)) if (file.endsWith('.ts')) found.add(`src/${api.name}/operations/${file}`);
  }
  return found;
}

const knownHandlerFiles = handlerFiles();

/** Whether a change needs the contract rebuilt: a spec, or a handler file added or removed (an edit of one does not). */
function needsContractBuild(relativePath: string): boolean {
  if (relativePath.startsWith('specs/')) return true;
  if (!HANDLER_FILE.test(relativePath)) return false;
  const exists = fs.existsSync(path.join(projectRoot, relativePath));
  if (exists === knownHandlerFiles.has(relativePath)) return false;
  if (exists) knownHandlerFiles.add(relativePath);
  else knownHandlerFiles.delete(relativePath);
  return true;
}

type Build = typeof import('./contract/build.js');
type BuildOptions = import('./contract/build.js').BuildOptions;
type GeneratedFile = import('./contract/build.js').GeneratedFile;
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
  // npm start's node flags, under tsx rather than npm start's runner (scripts/runTranspiled.mjs): tsx transpiles a
  // saved file alone, where the runner makes the whole folder again for every change of the sources.
  const startFlags = npmScriptNodeArguments('start').filter((argument) => argument.startsWith('--'));
  cluster.setupPrimary({ exec: path.join(projectRoot, 'src/server.ts'), execArgv: [...startFlags, '--import', 'tsx'], cwd: projectRoot });

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
  const buildContract = async (options: BuildOptions = {}): Promise<GeneratedFile[] | undefined> => {
    const started = performance.now();
    try {
      const files = await build.buildContracts(projectRoot, options);
      const written = build.writeGeneratedFiles(projectRoot, files);
      const what = options.types === false ? 'contract built (types.ts follows)' : 'contract built';
      say(`${what} in ${Math.round(performance.now() - started)} ms: ${written.length === 0 ? 'generated/ unchanged' : written.map((file) => file.path).join(', ')}`);
      contractBroken = false;
      return written;
    } catch (error) {
      contractBroken = true;
      complain(error instanceof ContractBuildError ? error.message : `the contract build failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      complain(serving ? `generated/ is unchanged and the last good server (pid ${serving.process.pid}) keeps serving; fix the spec and save.` : 'no server is running; fix the spec and save.');
      return undefined;
    }
  };

  /**
   * The next server, started ahead of time (DEV_SERVER_STANDBY=on): it loads its modules, most of a start, while
   * nothing happens, then waits to be told to start. Usable while nothing it loaded has changed: no file under src/,
   * no generated module (rules.ts); the JSON and YAML it serves are read when it starts.
   */
  let standby: { worker: Worker; stale: boolean; taken: boolean; waiting: boolean } | undefined;
  const prepareStandby = () => {
    if (stopping || standby) return;
    const entry = { worker: cluster.fork({ ...DEV_SERVER_ENV, DEV_SERVER_STANDBY: 'on' }), stale: false, taken: false, waiting: false };
    standby = entry;
    // It listens for `start` only once its modules are loaded (an earlier message would be lost): it says when.
    entry.worker.on('message', (message: unknown) => {
      if (typeof message !== 'object' || message === null || (message as { kind?: unknown }).kind !== 'standby-waiting') return;
      entry.waiting = true;
      if (entry.taken) entry.worker.send({ kind: 'start' });
    });
    entry.worker.once('exit', () => {
      if (standby === entry) standby = undefined;
      if (!entry.taken) retiring.delete(entry.worker);
    });
  };
  /** The standby, told to start, when its modules are current; otherwise a fresh server (the standby is stopped). */
  const takeServer = (): { worker: Worker; warm: boolean } => {
    const taken = standby;
    standby = undefined;
    if (taken && !taken.stale && taken.worker.isConnected()) {
      taken.taken = true;
      if (taken.waiting) taken.worker.send({ kind: 'start' });
      return { worker: taken.worker, warm: true };
    }
    if (taken) stopServer(taken.worker);
    return { worker: cluster.fork(DEV_SERVER_ENV), warm: false };
  };

  /** Starts a server beside the running one; once it serves, the running one is stopped. */
  const startServer = (savedAt: number | undefined): Promise<void> =>
    new Promise((resolve) => {
      const { worker, warm } = takeServer();
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
        const { url, publicBaseUrl } = message as { url: string; publicBaseUrl: string };
        // The two share the port until the previous one stops listening: only then does every new connection reach this one.
        void (previous ? retire(previous) : Promise.resolve()).then(() => {
          const timing = savedAt === undefined ? '' : `, ${Math.round(Date.now() - savedAt)} ms after the save${warm ? ', started ahead of time' : ''}`;
          say(`serving ${url} (server pid ${worker.process.pid}${previous ? `, replacing pid ${previous.process.pid}` : ''}${timing}); reference: ${publicBaseUrl}/v1/docs`);
          prepareStandby();
          resolve();
        });
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

  /** Stops a replaced server; resolves once it takes no new connection (it said so, or exited), or after a second. */
  const retire = (worker: Worker): Promise<void> =>
    new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('exit', done);
        resolve();
      };
      const onMessage = (message: unknown) => {
        if (typeof message === 'object' && message !== null && (message as { kind?: unknown }).kind === 'stopped-listening') done();
      };
      const timer = setTimeout(done, RETIRE_TIMEOUT_MS);
      worker.on('message', onMessage);
      worker.once('exit', done);
      stopServer(worker);
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
      // When the first of them was saved: its modification time, which a busy loop here cannot delay (the event can be);
      // not a time from before the burst (a file moved in keeps its own).
      const noticedAt = firstChangeAt ?? Date.now();
      const savedAt = Math.min(noticedAt, ...changes.map((change) => modifiedAt(change) ?? Infinity).filter((time) => time > noticedAt - 60_000));
      pending.clear();
      firstChangeAt = undefined;
      say(`changed: ${changes.length > 4 ? `${changes.slice(0, 4).join(', ')} and ${changes.length - 4} more` : changes.join(', ')}`);
      if (!contractBroken && !changes.map(needsContractBuild).some(Boolean)) {
        await startServer(savedAt);
        continue;
      }
      // The APIs whose spec folder changed; every API after a failed build or another change. types.ts (openapi-typescript,
      // about half the build) is read by the compiler only: it is rendered once the new server serves.
      const apis = contractBroken ? undefined : apisChangedIn(changes);
      const written = await buildContract({ apis, types: false });
      if (!written) continue;
      if (standby && written.some((file) => file.path.endsWith('/rules.ts'))) standby.stale = true;
      if (stopping) break;
      await startServer(savedAt);
      if (!stopping) scheduleTypes(apis);
    }
  };
  // types.ts once the saves pause: rendering it holds this process up (about half a build), and a save made meanwhile
  // would wait for it.
  let typesFor: Set<string> | 'all' | undefined;
  let typesTimer: NodeJS.Timeout | undefined;
  const scheduleTypes = (apis: readonly string[] | undefined) => {
    typesFor = apis === undefined || typesFor === 'all' ? 'all' : new Set([...(typesFor ?? []), ...apis]);
    clearTimeout(typesTimer);
    typesTimer = setTimeout(() => {
      if (stopping) return;
      if (cycle || pending.size > 0) return scheduleTypes([]);
      const apisNow = typesFor === 'all' ? undefined : [...(typesFor ?? [])];
      typesFor = undefined;
      cycle = buildContract({ apis: apisNow })
        .then(() => undefined)
        .finally(() => {
          cycle = undefined;
          if (pending.size > 0) startCycle();
        });
    }, TYPES_AFTER_MS);
  };
  const onFileEvent = (folder: string, filename: string | null) => {
    if (stopping || filename === null) return;
    const changed = `${folder}/${filename.split(path.sep).join('/')}`;
    if (!isWatchedFile(changed)) return;
    if (standby && folder === 'src') standby.stale = true;
    firstChangeAt ??= Date.now();
    pending.add(changed);
    clearTimeout(quietTimer);
    // A cycle under way takes the new changes when it is done.
    quietTimer = setTimeout(startCycle, QUIET_MS);
  };
  const startCycle = () => {
    if (cycle || stopping) return;
    cycle = handleChanges().finally(() => (cycle = undefined));
  };
  const watchers = ['specs', 'src'].map((folder) => {
    const watcher = fs.watch(path.join(projectRoot, folder), { recursive: true }, (_event, filename) => onFileEvent(folder, filename));
    watcher.on('error', (error) => complain(`watching ${folder}/ failed: ${error.message}`));
    return watcher;
  });

  // ── stopping: Ctrl-C reaches the server too (same process group); SIGTERM reaches only this process ──
  const stopped = new Promise<number>((resolve) => {
    let stoppingSince = 0;
    const stop = (signal: NodeJS.Signals) => {
      // One Ctrl-C can arrive twice: the terminal signals the whole process group, and npm passes it on to this process too.
      if (stopping && Date.now() - stoppingSince < SAME_SIGNAL_MS) return;
      if (stopping) {
        complain(`${signal} again: killing the server.`);
        for (const worker of Object.values(cluster.workers ?? {})) if (worker) stopServer(worker, 'SIGKILL');
        return;
      }
      stopping = true;
      stoppingSince = Date.now();
      say(`${signal}: stopping the server…`);
      clearTimeout(quietTimer);
      clearTimeout(typesTimer);
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
  if (pending.size > 0) startCycle();
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
