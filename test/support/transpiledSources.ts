// The server's sources (src/, generated/, db/, and the scripts tests run) transpiled once per test run, file by file, by esbuild: what tsx does
// in memory at every start of `npm start`, done once for the run's child processes. A tsx start spent about 1.4 s more
// CPU than the same start from these files (its loader thread resolves and compiles every module), and a run starts
// a hundred or so servers, workers and CLI calls. The output is the same JavaScript tsx runs (esbuild, per file, no
// type check; tsconfig's isolatedModules makes that exact); what `npm start` itself adds (its flags, --import tsx) is
// proven by the tests that start it as npm does (test/readmeTour, test/devLoop, test/reliability/npmSignals).
//
// Made by the first test process that asks, in .scratch-builds/ (the compiled modules find node_modules and the project
// root by walking up, as compiledBuild.ts's do); the global teardown removes it.
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
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

let transpiled: Promise<string> | undefined;

/** The folder holding the run's transpiled sources: `<outDir>/src/server.js` is src/server.ts as tsx runs it. */
export function transpiledSources(): Promise<string> {
  const rendezvous = inject('postgresRendezvous');
  transpiled ??= joinOrStart<TranspiledLocation>(rendezvous, 'transpiled-sources', transpile, 60_000).then(({ outDir }) => outDir);
  return transpiled;
}

async function transpile(): Promise<TranspiledLocation> {
  const { build } = await import('esbuild');
  const scratch = path.join(repoRoot, '.scratch-builds');
  mkdirSync(scratch, { recursive: true });
  const outDir = mkdtempSync(path.join(scratch, 'transpiled-'));
  await build({
    entryPoints: TRANSPILED.flatMap((folder) => typeScriptFiles(folder)),
    outdir: outDir,
    outbase: repoRoot,
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
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

/** For the global teardown: removes the run's transpiled folder, if a test made one. */
export function removeTranspiledSources(rendezvous: string): void {
  const location = startedInRendezvous<TranspiledLocation>(rendezvous, 'transpiled-sources');
  if (location) rmSync(location.outDir, { recursive: true, force: true });
}
