// The node arguments of an npm script written as `[exec] node <flags> <entry>`, so that the bench and
// the tests start the server and the worker exactly as `npm start` and `npm run worker` do. `exec` makes the shell npm
// runs the script in become node, so that a signal sent to npm's child reaches the server (dash does not exec by itself).
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** The scripts written as `node <flags> <entry>`: under tsx, and their compiled twins (npm run build). */
export type NodeScript = 'start' | 'dev' | 'worker' | 'start:production' | 'worker:production' | 'admin:production';

export function npmScriptNodeArguments(script: NodeScript): string[] {
  const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
  const [command, ...nodeArguments] = (packageJson.scripts[script] ?? '').trim().replace(/^exec\s+/, '').split(/\s+/);
  if (command !== 'node' || nodeArguments.length === 0) {
    throw new Error(`package.json script "${script}" must read "[exec] node <flags> <entry>", not "${packageJson.scripts[script]}"`);
  }
  return nodeArguments;
}

/**
 * A compiled script's node arguments with its entry point taken from `outDir` instead of dist/ (a build of its own,
 * see compiledBuild.ts). Run them from the project root: the script's `--import ./scripts/…` is relative to it.
 */
export function compiledScriptNodeArguments(script: NodeScript, outDir: string): string[] {
  const nodeArguments = npmScriptNodeArguments(script);
  const entry = nodeArguments.at(-1)!;
  if (!entry.startsWith('dist/')) throw new Error(`package.json script "${script}" does not run a compiled entry point under dist/: ${entry}`);
  return [...nodeArguments.slice(0, -1), path.join(outDir, entry.slice('dist/'.length))];
}
