// The node arguments of an npm script written as `node <flags> <entry>`, so that the bench and
// the tests start the server and the worker exactly as `npm start` and `npm run worker` do.
import { readFileSync } from 'node:fs';

export function npmScriptNodeArguments(script: 'start' | 'worker'): string[] {
  const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
  const [command, ...nodeArguments] = (packageJson.scripts[script] ?? '').trim().split(/\s+/);
  if (command !== 'node' || nodeArguments.length === 0) {
    throw new Error(`package.json script "${script}" must read "node <flags> <entry>", not "${packageJson.scripts[script]}"`);
  }
  return nodeArguments;
}
