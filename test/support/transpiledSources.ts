// The server's sources (src/, generated/, db/, and the scripts tests run) transpiled once per test run, file by file,
// by the esbuild tsx itself uses, with tsx's target: what tsx does in memory at every start of `npm start`, done once
// for the run's child processes. A tsx start spent about 1.4 s more CPU than the same start from these files (its
// loader thread resolves and compiles every module), and a run starts a hundred or so servers, workers and CLI calls.
// tsconfig's isolatedModules makes per-file transpiling exact. `npm start` and `npm run worker` as npm runs them
// (their flags and --import tsx) are proven by test/reliability/npmSignals.test.ts and test/webhooks/workerProcess.test.ts,
// and `npm run dev` by test/devLoop.test.ts.
//
// Made by the first test process that asks for the sources as they are now (a save during a watch run makes another),
// in .scratch-builds/ (the compiled modules find node_modules and the project root by walking up, as compiledBuild.ts's
// do); the global teardown removes them.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { inject } from 'vitest';
import { joinOrStart, startedInRendezvous } from './rendezvous.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
// Of scripts/, the conformance runner and what it imports: the others find the project root from where they are.
const TRANSPILED = ['src', 'generated', 'db', 'scripts/conformance.ts', 'scripts/conformance', 'scripts/contract'].map(path.normalize);
const NOT_TRANSPILED = new Set(['src/client', 'db/migrations', 'db/postgres/migrations'].map(path.normalize));

interface TranspiledLocation {
  outDir: string;
}

const RENDEZVOUS_NAME = 'transpiled-sources';
const transpiled = new Map<string, Promise<string>>();

/**
 * The folder holding the run's transpiled sources as they are now: `<outDir>/src/server.js` is src/server.ts as tsx
 * runs it. The sources are stated at each call (about 300 files, a few ms): a changed one makes a new folder.
 */
export function transpiledSources(): Promise<string> {
  const rendezvous = inject('postgresRendezvous');
  const files = TRANSPILED.flatMap((folder) => typeScriptFiles(folder));
  const state = files
    .map((file) => {
      const { mtimeMs, size } = statSync(file);
      return `${file}:${mtimeMs}:${size}`;
    })
    .join('\n');
  const name = `${RENDEZVOUS_NAME}-${createHash('sha256').update(state).digest('hex').slice(0, 16)}`;
  let outDir = transpiled.get(name);
  if (!outDir) {
    outDir = joinOrStart<TranspiledLocation>(rendezvous, name, () => transpile(files), 60_000).then((location) => location.outDir);
    transpiled.set(name, outDir);
  }
  return outDir;
}

async function transpile(entryPoints: string[]): Promise<TranspiledLocation> {
  // tsx's own esbuild (the hoisted one may be another version), with the target tsx gives it.
  const { build } = createRequire(createRequire(import.meta.url).resolve('tsx/package.json'))('esbuild') as typeof import('esbuild');
  const scratch = path.join(repoRoot, '.scratch-builds');
  mkdirSync(scratch, { recursive: true });
  const outDir = mkdtempSync(path.join(scratch, 'transpiled-'));
  await build({
    entryPoints,
    outdir: outDir,
    outbase: repoRoot,
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: `node${process.versions.node}`,
    logLevel: 'silent',
  });
  return { outDir };
}

function typeScriptFiles(folder: string): string[] {
  if (folder.endsWith('.ts')) return [path.join(repoRoot, folder)];
  return readdirSync(path.join(repoRoot, folder), { withFileTypes: true }).flatMap((entry) => {
    const relativePath = path.join(folder, entry.name);
    if (entry.isDirectory()) return NOT_TRANSPILED.has(relativePath) ? [] : typeScriptFiles(relativePath);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path.join(repoRoot, relativePath)] : [];
  });
}

/** Where `repositoryPath` (`src/server.ts`) is in the transpiled folder, or undefined when it is not transpiled. */
export function transpiledPath(outDir: string, repositoryPath: string): string | undefined {
  const relative = path.isAbsolute(repositoryPath) ? path.relative(repoRoot, repositoryPath) : path.normalize(repositoryPath);
  const within = (folder: string) => relative === folder || relative.startsWith(folder + path.sep);
  if (!relative.endsWith('.ts') || !TRANSPILED.some(within) || [...NOT_TRANSPILED].some(within)) return undefined;
  return path.join(outDir, relative.replace(/\.ts$/, '.js'));
}

/**
 * An npm script's node arguments (`--max-semi-space-size=4 … --import tsx src/server.ts`) with its TypeScript entry run
 * from the transpiled folder instead: the same flags, without tsx's loader. Arguments without a transpiled entry are
 * returned as they are.
 */
export function withTranspiledEntry(nodeArguments: readonly string[], outDir: string): string[] {
  const entry = nodeArguments.at(-1);
  const compiled = entry === undefined ? undefined : transpiledPath(outDir, entry);
  if (compiled === undefined) return [...nodeArguments];
  const flags = nodeArguments.slice(0, -1).filter((argument, index, all) => !isTsxImport(argument, all[index - 1]) && !isTsxImport(all[index + 1], argument));
  return [...flags, compiled];
}

const isTsxImport = (value: string | undefined, flag: string | undefined) => flag === '--import' && value !== undefined && /(^tsx$)|tsx\/dist\/loader/.test(value);

/** The file URLs of transpiled sources in `source` (JavaScript text) rewritten to their transpiled twins. */
export function withTranspiledImports(source: string, outDir: string): string {
  const repoUrl = pathToFileURL(repoRoot).href;
  return source.replace(new RegExp(`${escapeRegExp(repoUrl)}/([^"'\\s]+\\.ts)`, 'g'), (url, relative: string) => {
    const compiled = transpiledPath(outDir, relative);
    return compiled === undefined ? url : pathToFileURL(compiled).href;
  });
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** For the global teardown: removes the run's transpiled folders, if tests made any. */
export function removeTranspiledSources(rendezvous: string): void {
  for (const entry of readdirSync(rendezvous)) {
    if (!entry.startsWith(`${RENDEZVOUS_NAME}-`) || !entry.endsWith('.json')) continue;
    const location = startedInRendezvous<TranspiledLocation>(rendezvous, entry.slice(0, -'.json'.length));
    if (location) rmSync(location.outDir, { recursive: true, force: true });
  }
}
