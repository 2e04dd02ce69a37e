// Summarizes a V8 .cpuprofile (node --cpu-prof): the functions with the most samples of their own
// (self) and with the most samples anywhere on their stack (inclusive), as shares of the samples.
// See `npx tsx scripts/bench/summarize-profile.ts --help`.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const HELP = `Usage: npx tsx scripts/bench/summarize-profile.ts [--last S] [--top N] FILE.cpuprofile

Prints the top N functions by self and by inclusive share of the profile's samples.
  --last S   only the last S seconds of the profile (e.g. the load window of a bench run;
             default: the whole profile, start-up included)
  --top N    how many functions per list (default 30)
`;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

function frameName(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(src|scripts)\//, '$1/');
  return `${functionName || '(anonymous)'} ${where}${where ? `:${lineNumber + 1}` : ''}`;
}

export function summarizeProfile(profile: CpuProfile, lastSeconds: number | undefined, top: number): string {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const windowStart = lastSeconds === undefined ? -Infinity : profile.endTime - lastSeconds * 1e6;
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let counted = 0;
  let time = profile.startTime;
  profile.samples.forEach((sampleNodeId, index) => {
    time += profile.timeDeltas[index] ?? 0;
    if (time < windowStart) return;
    counted += 1;
    const leaf = frameName(nodes.get(sampleNodeId)!);
    self.set(leaf, (self.get(leaf) ?? 0) + 1);
    const onStack = new Set<string>();
    for (let id: number | undefined = sampleNodeId; id !== undefined; id = parents.get(id)) {
      onStack.add(frameName(nodes.get(id)!));
    }
    for (const name of onStack) inclusive.set(name, (inclusive.get(name) ?? 0) + 1);
  });
  const list = (counts: Map<string, number>) =>
    [...counts]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, samples]) => `${((100 * samples) / Math.max(1, counted)).toFixed(1).padStart(6)} %  ${name}`)
      .join('\n');
  return [`${counted} samples${lastSeconds === undefined ? '' : ` in the last ${lastSeconds} s`}`, '', 'Self:', list(self), '', 'Inclusive:', list(inclusive), ''].join('\n');
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { last: { type: 'string' }, top: { type: 'string', default: '30' }, help: { type: 'boolean', default: false } },
  });
  if (values.help || positionals.length !== 1) {
    process.stdout.write(HELP);
    process.exitCode = values.help ? 0 : 2;
    return;
  }
  const profile = JSON.parse(readFileSync(positionals[0]!, 'utf8')) as CpuProfile;
  const lastSeconds = values.last === undefined ? undefined : Number(values.last);
  process.stdout.write(summarizeProfile(profile, lastSeconds, Number(values.top)));
}

main();
