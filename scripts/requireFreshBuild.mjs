// Loaded with `node --import` before a compiled entry point (npm run start:production, worker:production,
// admin:production): refuses to start, with what to do, when the build is missing or older than the sources.
// Plain JavaScript, because it must run when there is no build at all. Where there is no src/ (the Docker image
// ships the build without the sources) it checks that the entry point exists. It stats about 250 files: a few ms.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const projectRoot = path.resolve(import.meta.dirname, '..');

/** What the build is compiled from (tsconfig.build.json): src/ but the client package, and what it imports. */
const SOURCE_FOLDERS = ['src', 'generated'];
const SKIPPED_FOLDERS = new Set([path.join('src', 'client')]);
const SOURCE_FILES = [path.join('db', 'schema.ts'), path.join('db', 'postgres', 'schema.ts'), 'tsconfig.json', 'tsconfig.build.json'];

/** The most recently changed source file and its modification time, or undefined when there are no sources here. */
function newestSource() {
  if (!existsSync(path.join(projectRoot, 'src'))) return undefined;
  let newest;
  const consider = (relativePath) => {
    const modified = statSync(path.join(projectRoot, relativePath)).mtimeMs;
    if (!newest || modified > newest.modified) newest = { relativePath, modified };
  };
  const walk = (folder) => {
    for (const entry of readdirSync(path.join(projectRoot, folder), { withFileTypes: true })) {
      const relativePath = path.join(folder, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED_FOLDERS.has(relativePath)) walk(relativePath);
      } else if (entry.name.endsWith('.ts')) {
        consider(relativePath);
      }
    }
  };
  for (const folder of SOURCE_FOLDERS) walk(folder);
  for (const file of SOURCE_FILES) consider(file);
  return newest;
}

function refuse(reason) {
  process.stderr.write(`${reason}: run npm run build first.\n`);
  process.exit(1);
}

const entry = process.argv[1];
if (entry !== undefined) {
  let built;
  try {
    built = statSync(entry).mtimeMs;
  } catch {
    refuse(`No compiled build at ${path.relative(process.cwd(), entry) || entry}`);
  }
  const newest = newestSource();
  if (newest && newest.modified > built) {
    refuse(`The compiled build ${path.relative(process.cwd(), entry)} is older than the sources (${newest.relativePath} changed after it was built)`);
  }
}
