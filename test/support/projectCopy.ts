// A copy of the project in a temporary folder, for tests that edit specs/ or src/ and start the server or the dev loop
// from it: the real files (a few MB), node_modules linked. The copied modules find this copy as their project root
// (src/projectFiles.ts walks up to the nearest package.json).
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const repoRoot = path.resolve(import.meta.dirname, '../..');

/** What the server, the contract build and the dev loop read. */
const COPIED = ['package.json', 'tsconfig.json', 'src', 'scripts', 'specs', 'generated', 'db'];

export interface ProjectCopy {
  root: string;
  /** An absolute path inside the copy. */
  file(relativePath: string): string;
  remove(): void;
}

/** `alsoCopied`: more entries of the project root, e.g. `test` and `vitest.config.ts` for a copy that runs tests. */
export function copyProject(prefix: string, alsoCopied: readonly string[] = []): ProjectCopy {
  const root = mkdtempSync(path.join(tmpdir(), prefix));
  for (const entry of [...COPIED, ...alsoCopied]) {
    cpSync(path.join(repoRoot, entry), path.join(root, entry), {
      recursive: true,
      // Not the client package's build (src/client/dist) nor its packed archives.
      filter: (source) => !path.relative(repoRoot, source).split(path.sep).includes('dist') && !source.endsWith('.tgz'),
    });
  }
  symlinkSync(path.join(repoRoot, 'node_modules'), path.join(root, 'node_modules'), 'dir');
  return { root, file: (relativePath) => path.join(root, relativePath), remove: () => rmSync(root, { recursive: true, force: true }) };
}
