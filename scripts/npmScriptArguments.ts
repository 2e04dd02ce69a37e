// The node arguments (and environment) of an npm script written as `[NAME=value ...] [exec] node <flags> <entry>`, so that the bench and
// the tests start the server and the worker exactly as `npm start` and `npm run worker` do. `exec` makes the shell npm
// runs the script in become node, so that a signal sent to npm's child reaches the server (dash does not exec by itself).
import { readFileSync } from 'node:fs';
import path from 'node:path';

const thisProject = path.resolve(import.meta.dirname, '..');

/** The scripts written as `node <flags> <entry>`: the sources transpiled (scripts/runTranspiled.mjs), and their compiled twins (npm run build). */
export type NodeScript = 'start' | 'dev' | 'worker' | 'admin' | 'mcp' | 'start:production' | 'worker:production' | 'admin:production';

/** A script's words: its leading `NAME=value` assignments (the environment it sets), then `[exec] node <flags> <entry>`. */
function parsedScript(script: NodeScript, projectRoot: string): { environment: Record<string, string>; nodeArguments: string[] } {
  const packageJson = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const words = (packageJson.scripts[script] ?? '').trim().split(/\s+/);
  const environment: Record<string, string> = {};
  while (words.length > 0 && /^[A-Z_][A-Z0-9_]*=\S*$/.test(words[0]!)) {
    const [name, ...value] = words.shift()!.split('=');
    environment[name!] = value.join('=');
  }
  if (words[0] === 'exec') words.shift();
  const [command, ...nodeArguments] = words;
  if (command !== 'node' || nodeArguments.length === 0) {
    throw new Error(`package.json script "${script}" must read "[NAME=value ...] [exec] node <flags> <entry>", not "${packageJson.scripts[script]}"`);
  }
  return { environment, nodeArguments };
}

/** `projectRoot`: another checkout's package.json (an A/B against an older commit), this one's by default. */
export function npmScriptNodeArguments(script: NodeScript, projectRoot = thisProject): string[] {
  return parsedScript(script, projectRoot).nodeArguments;
}

/** The environment variables a script sets before node (MALLOC_ARENA_MAX for the servers), to start it as npm does. */
export function npmScriptEnvironment(script: NodeScript, projectRoot = thisProject): Record<string, string> {
  return parsedScript(script, projectRoot).environment;
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
