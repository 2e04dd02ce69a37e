// `npm run build` into a folder of its own, for the bench and the tests: they measure and start the compiled server
// from the current sources, whatever state dist/ is in, and never replace the dist/ a running server may be using.
// The folder lies inside the project (.scratch-builds/, git-ignored) because the compiled modules find node_modules
// and the project root (src/projectFiles.ts) by walking up from where they are.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';

const projectRoot = path.resolve(import.meta.dirname, '..');
const SCRATCH_FOLDER = path.join(projectRoot, '.scratch-builds');

export interface ScratchBuild {
  /** Where the build is: `<outDir>/src/server.js` is what dist/src/server.js is after npm run build. */
  outDir: string;
  /** How long tsc took, in seconds. */
  seconds: number;
  remove(): void;
}

export async function buildIntoScratchFolder(prefix: string): Promise<ScratchBuild> {
  mkdirSync(SCRATCH_FOLDER, { recursive: true });
  const outDir = mkdtempSync(path.join(SCRATCH_FOLDER, prefix));
  const remove = () => rmSync(outDir, { recursive: true, force: true });
  const started = performance.now();
  try {
    await new Promise<void>((resolve, reject) => {
      execFile(
        process.execPath,
        [path.join(projectRoot, 'node_modules/typescript/bin/tsc'), '-p', path.join(projectRoot, 'tsconfig.build.json'), '--outDir', outDir],
        { cwd: projectRoot, maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) => (error ? reject(new Error(`tsc -p tsconfig.build.json failed:\n${stdout}${stderr}`)) : resolve()),
      );
    });
  } catch (error) {
    remove();
    throw error;
  }
  return { outDir, seconds: (performance.now() - started) / 1000, remove };
}
