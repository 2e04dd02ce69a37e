// The TypeScript sources transpiled file by file to JavaScript with esbuild (the one tsx brings, with tsx's target),
// once for the files as they are (their paths, sizes and change times), into .cache/transpiled-sources/<key>/: what
// `npm start` runs (scripts/runTranspiled.mjs), and the tests' child processes (test/support/transpiledSources.ts).
// tsconfig's isolatedModules makes per-file transpiling exact; nothing is type-checked here (npm run typecheck is).
//
// The modules find node_modules and the project root (src/projectFiles.ts) by walking up from .cache/, as the compiled
// build's do from dist/. Source maps are written beside each file (stack traces name the TypeScript lines with
// `NODE_OPTIONS=--enable-source-maps`). Each process marks the folder it runs from (<key>/.users/<pid>; the one that
// makes a folder, before the folder appears) and removes its mark at exit. A start removes the other folders that no
// running process marks and none has marked for a minute, moving each aside first and giving it back when a start
// marked it meanwhile. Plain JavaScript: it runs before any TypeScript can.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export const projectRoot = path.resolve(import.meta.dirname, '..');
const cacheFolder = path.join(projectRoot, '.cache', 'transpiled-sources');

/** What `npm start`, `npm run worker` and the admin CLI are made of: src/ but the client package, generated/, db/ but the migrations. */
export const RUN_SOURCES = { folders: ['src', 'generated', 'db'], skipped: ['src/client', 'db/migrations', 'db/postgres/migrations'] };

/** The TypeScript files of `sources` (folders, or single files), relative to the project root, in a stable order. */
export function sourceFiles(sources = RUN_SOURCES) {
  const skipped = new Set(sources.skipped.map(path.normalize));
  const files = [];
  const walk = (relativePath) => {
    if (relativePath.endsWith('.ts')) {
      if (!relativePath.endsWith('.d.ts')) files.push(relativePath);
      return;
    }
    const entries = readdirSync(path.join(projectRoot, relativePath), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const child = path.join(relativePath, entry.name);
      if (entry.isDirectory() ? !skipped.has(child) : entry.name.endsWith('.ts')) walk(child);
    }
  };
  for (const source of sources.folders) walk(path.normalize(source));
  return files;
}

/** tsx's own esbuild package folder: the hoisted esbuild may be another version (drizzle-kit's). */
function esbuildFolder() {
  const fromTsx = createRequire(createRequire(import.meta.url).resolve('tsx/package.json'));
  return path.dirname(fromTsx.resolve('esbuild/package.json'));
}

/** The folder's key: the files' paths, sizes and change times (tsconfig.json's too: esbuild reads it), the project's place, node's version and esbuild's. */
function sourcesKey(files, esbuildVersion) {
  const hash = createHash('sha256').update(`${projectRoot}\n${process.versions.node}\n${esbuildVersion}\n`);
  for (const file of [...files, 'tsconfig.json']) {
    const { mtimeMs, size } = statSync(path.join(projectRoot, file));
    hash.update(`${file}:${mtimeMs}:${size}\n`);
  }
  return hash.digest('hex').slice(0, 16);
}

function isRunning(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** How long a folder no running process marks is kept after its last mark came or went: a start of its sources may be under way. */
const KEPT_UNUSED_MS = 60_000;

/** Whether a running process marks `folder`, or one marked or unmarked it within KEPT_UNUSED_MS. */
function inUse(folder) {
  const marks = path.join(folder, '.users');
  return readdirSync(marks).some((pid) => isRunning(Number(pid))) || Date.now() - statSync(marks).mtimeMs < KEPT_UNUSED_MS;
}

/**
 * Removes the folders not in use but `keep`, and what ended processes left half-made or half-removed. A folder is moved
 * aside before it is removed, so that no start finds it half-removed; a start that marked it meanwhile (after the look
 * at its marks) gets it back. Nothing here fails a start.
 */
function removeUnused(keep) {
  for (const entry of readdirSync(cacheFolder)) {
    if (entry === keep) continue;
    const folder = path.join(cacheFolder, entry);
    try {
      const ofProcess = /\.(making|removing)-(\d+)$/.exec(entry);
      if (ofProcess) {
        if (!isRunning(Number(ofProcess[2]))) rmSync(folder, { recursive: true, force: true });
        continue;
      }
      if (inUse(folder)) continue;
      const aside = `${folder}.removing-${process.pid}`;
      renameSync(folder, aside);
      if (inUse(aside)) {
        try {
          renameSync(aside, folder);
          continue;
        } catch {
          // Made again meanwhile (the same JavaScript, where the start that marked this one finds its modules).
        }
      }
      rmSync(aside, { recursive: true, force: true });
    } catch {
      // Removed or moved by another start meanwhile, or not removable: left for a later start.
    }
  }
}

const marked = new Set();

/**
 * Marks `folder` as run from by this process until it exits; false when the folder is not there (not yet made, or moved
 * aside to be removed: the mark went with it). Any other failure (a folder this user may not write) is thrown.
 */
function markUse(folder) {
  const mark = path.join(folder, '.users', String(process.pid));
  if (!marked.has(mark)) {
    try {
      mkdirSync(path.dirname(mark));
    } catch (error) {
      if (error.code === 'ENOENT') return false;
      if (error.code !== 'EEXIST') throw error;
    }
    try {
      writeFileSync(mark, '');
    } catch (error) {
      if (error.code === 'ENOENT') return false;
      throw error;
    }
    marked.add(mark);
    process.once('exit', () => rmSync(mark, { force: true }));
  }
  if (existsSync(mark)) return true;
  marked.delete(mark);
  return false;
}

/** Transpiles `files` into <cache>/<key>: into a folder of this process's, marked as run from by it, renamed into place when whole. */
function make(files, key, esbuild) {
  const folder = path.join(cacheFolder, key);
  const making = `${folder}.making-${process.pid}`;
  rmSync(making, { recursive: true, force: true });
  try {
    esbuild.buildSync({
      entryPoints: files.map((file) => path.join(projectRoot, file)),
      outdir: making,
      outbase: projectRoot,
      bundle: false,
      format: 'esm',
      platform: 'node',
      target: `node${process.versions.node}`,
      sourcemap: 'linked',
      logLevel: 'error',
    });
  } catch (error) {
    rmSync(making, { recursive: true, force: true });
    // esbuild has printed each error with its file and line.
    throw new Error('the TypeScript sources could not be transpiled (esbuild printed why above)', { cause: error });
  }
  mkdirSync(path.join(making, '.users'));
  writeFileSync(path.join(making, '.users', String(process.pid)), '');
  try {
    renameSync(making, folder);
  } catch (error) {
    // Another process made the same folder meanwhile: the same JavaScript.
    rmSync(making, { recursive: true, force: true });
    if (!existsSync(folder)) throw error;
  }
}

/**
 * The folder of `sources` as they are now, transpiled (made now when they changed), and marked as run from by this
 * process: `<folder>/src/server.js` is src/server.ts. `files`: sourceFiles(sources), when the caller has listed them
 * already. Stating the files takes a few milliseconds; making the folder about half a second.
 */
export function transpiledSources(sources = RUN_SOURCES, files = sourceFiles(sources)) {
  const esbuildPackage = esbuildFolder();
  const key = sourcesKey(files, JSON.parse(readFileSync(path.join(esbuildPackage, 'package.json'), 'utf8')).version);
  const folder = path.join(cacheFolder, key);
  mkdirSync(cacheFolder, { recursive: true });
  for (let attempt = 1; ; attempt += 1) {
    if (!existsSync(folder)) make(files, key, createRequire(path.join(esbuildPackage, 'package.json'))('esbuild'));
    // Not there to mark: moved aside to be removed (its sources were not run for a minute): made again, or given back.
    if (markUse(folder)) {
      removeUnused(key);
      return folder;
    }
    if (attempt === 3) throw new Error(`${folder} was removed each time it was made`);
  }
}
