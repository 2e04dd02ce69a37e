// The files this server reads by path at run time (generated/ artifacts, db/migrations, the import schema in specs/),
// found from the project root: the nearest folder above this module that holds package.json. That is the same folder
// whether the module runs from src/ under tsx, transpiled into .cache/transpiled-sources/<key>/src/ (npm start) or
// compiled into dist/src/ (npm run build), so nothing is copied into either.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findProjectRoot(from: string): string {
  for (let folder = from; ; ) {
    if (existsSync(path.join(folder, 'package.json'))) return folder;
    const parent = path.dirname(folder);
    if (parent === folder) throw new Error(`No package.json above ${from}: the project root cannot be found`);
    folder = parent;
  }
}

/** The folder of package.json, generated/, db/ and specs/. */
export const projectRoot = findProjectRoot(path.dirname(fileURLToPath(import.meta.url)));

/** The absolute path of a project file given relative to the root, e.g. `projectFile('db/migrations')`. */
export function projectFile(relativePath: string): string {
  return path.join(projectRoot, relativePath);
}

/**
 * The TypeScript source a module of src/ is made from, for messages that tell a developer which file to add or edit:
 * the same path whether the module runs as TypeScript, transpiled into .cache/transpiled-sources/<key>/src/ (npm start)
 * or compiled into dist/src/ (npm run build). `file` may name the .js or the .ts.
 */
export function sourceFileOf(file: string): string {
  const segments = path.relative(projectRoot, file).split(path.sep);
  const source = segments[0] === '..' ? -1 : segments.indexOf('src');
  return (source === -1 ? file : path.join(projectRoot, ...segments.slice(source))).replace(/\.js$/, '.ts');
}
