// `--help` (or -h) for the bench's hand-run scripts: each prints its own opening comment, which says
// how to run it and what it measures, and exits before it starts anything.
import { readFileSync } from 'node:fs';

export function printHelpWhenAsked(scriptFile: string): void {
  if (!process.argv.slice(2).some((argument) => argument === '--help' || argument === '-h')) return;
  const opening = readFileSync(scriptFile, 'utf8').split(/\n(?=import )/)[0]!;
  process.stdout.write(`${opening.replace(/^\/\/ ?/gm, '')}\n`);
  process.exit(0);
}
