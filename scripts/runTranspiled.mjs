// `node [flags] scripts/runTranspiled.mjs <entry.ts> [arguments]`: how npm start, npm run worker, npm run admin and
// npm run mcp run the TypeScript sources. The sources are transpiled once for the files as they are
// (scripts/transpiledSources.mjs), then the entry's twin is imported in this process, with process.argv as if node had been given it.
//
// Not `--import tsx`: tsx's loader runs in a thread of its own with its own heap and keeps every module's source map,
// which cost the server about 30 MB of RSS (measured: 121 against 96 MB at start, 167 against 139 MB after a load of
// every bench scenario and the analytics calls) and about 1 s of CPU at each start.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { RUN_SOURCES, projectRoot, sourceFiles, transpiledSources } from './transpiledSources.mjs';

const USAGE = 'Usage: node [node flags] scripts/runTranspiled.mjs <src/…/entry.ts> [arguments of the entry]\n';

const [entry, ...entryArguments] = process.argv.slice(2);
if (entry === '--help' || entry === '-h') {
  process.stdout.write(USAGE);
  process.exit(0);
}
const files = sourceFiles(RUN_SOURCES);
const relativeEntry = entry === undefined ? undefined : path.relative(projectRoot, path.resolve(entry));
if (relativeEntry === undefined || !files.includes(relativeEntry)) {
  process.stderr.write(`${entry === undefined ? 'No entry point given' : `${entry} is not among the sources it runs (src/, generated/, db/)`}.\n${USAGE}`);
  process.exit(2);
}
let folder;
try {
  folder = transpiledSources(RUN_SOURCES, files);
} catch (error) {
  const unwritable = ['EACCES', 'EPERM', 'EROFS'].includes(error.code);
  process.stderr.write(
    `${error.message}: nothing was started.\n` +
      (unwritable ? 'The sources are transpiled into .cache/ of the project, which must be writable; a read-only copy runs the compiled build: npm run build, then npm run start:production.\n' : ''),
  );
  process.exit(1);
}
const compiledEntry = path.join(folder, relativeEntry.replace(/\.ts$/, '.js'));
process.argv = [process.argv[0], compiledEntry, ...entryArguments];
await import(pathToFileURL(compiledEntry).href);
