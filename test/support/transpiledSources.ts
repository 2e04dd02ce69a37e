// The sources the tests' child processes run, transpiled (scripts/transpiledSources.mjs, the same folder making as
// `npm start`'s): `npm start`'s sources and the scripts tests run by file (the conformance runner and what it
// imports). Servers and workers need nothing of this: they start as npm starts them (scripts/runTranspiled.mjs).
// runSourceFile and runScriptProcess (serverProcess.ts) take their entries and imports from here, and so skip tsx's
// loader, which cost about 1.4 s of CPU per child.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { RUN_SOURCES, projectRoot, transpiledSources as transpiledSourcesOf, type SourceSet } from '../../scripts/transpiledSources.mjs';

const TEST_SOURCES: SourceSet = { folders: [...RUN_SOURCES.folders, 'scripts/conformance.ts', 'scripts/conformance', 'scripts/contract'], skipped: RUN_SOURCES.skipped };

/** The folder of the test sources as they are now, transpiled: `<folder>/src/cli/admin.js` is src/cli/admin.ts. */
export function transpiledSources(): string {
  return transpiledSourcesOf(TEST_SOURCES);
}

/** Where `repositoryPath` (`src/server.ts`) is in the transpiled folder, or undefined when it is not transpiled. */
export function transpiledPath(outDir: string, repositoryPath: string): string | undefined {
  const relative = path.isAbsolute(repositoryPath) ? path.relative(projectRoot, repositoryPath) : path.normalize(repositoryPath);
  const within = (folder: string) => relative === path.normalize(folder) || relative.startsWith(path.normalize(folder) + path.sep);
  if (!relative.endsWith('.ts') || !TEST_SOURCES.folders.some(within) || TEST_SOURCES.skipped.some(within)) return undefined;
  return path.join(outDir, relative.replace(/\.ts$/, '.js'));
}

/** The file URLs of transpiled sources in `source` (JavaScript text) rewritten to their transpiled twins. */
export function withTranspiledImports(source: string, outDir: string): string {
  const repoUrl = pathToFileURL(projectRoot).href;
  return source.replace(new RegExp(`${escapeRegExp(repoUrl)}/([^"'\\s]+\\.ts)`, 'g'), (url, relative: string) => {
    const compiled = transpiledPath(outDir, relative);
    return compiled === undefined ? url : pathToFileURL(compiled).href;
  });
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
