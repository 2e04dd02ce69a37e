// CLI: npm run release:contract [-- --date YYYY-MM-DD]
// Records the current specs as released: writes specs/<api>/released/openapi.json (the bundled document with its
// release date, version and the number of changelog entries it covers) for every API that changed, after the same
// check as npm run check:contract. Commit the snapshots with the release.

import { fileURLToPath } from 'node:url';
import { discoverApis } from './contract/build.js';
import { formatProblem } from './contract/problems.js';
import { releaseContracts } from './contract/release.js';

const USAGE = `Usage: tsx scripts/release-contract.ts [--date YYYY-MM-DD] [--help]

Writes specs/<api>/released/openapi.json for every API whose spec changed since its last snapshot.
Refuses (exit 1, listing what to write) when specs/<api>/changelog.yaml lacks an entry for a change
or a breaking change comes without a new major info.version. --date defaults to today (UTC).`;

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

function main(args: string[]): number {
  if (args.includes('--help') || args.includes('-h')) {
    console.log(USAGE);
    return 0;
  }
  const dateIndex = args.indexOf('--date');
  const date = dateIndex >= 0 ? args[dateIndex + 1] : new Date().toISOString().slice(0, 10);
  const known = dateIndex >= 0 ? [dateIndex, dateIndex + 1] : [];
  const unknown = args.filter((_, index) => !known.includes(index));
  if (unknown.length > 0 || date === undefined || !/^\d{4}-\d{2}-\d{2}$/.test(date)) {
    console.error(`${unknown.length > 0 ? `Unknown argument: ${unknown.join(' ')}` : '--date needs YYYY-MM-DD'}\n\n${USAGE}`);
    return 2;
  }
  const { outcomes, problems } = releaseContracts(REPO_ROOT, discoverApis(REPO_ROOT).map((spec) => spec.api), date);
  if (problems.length > 0) {
    console.error(`Nothing released; the contract has ${problems.length === 1 ? '1 problem' : `${problems.length} problems`}:`);
    for (const problem of problems) console.error(`  - ${formatProblem(problem)}`);
    return 1;
  }
  for (const outcome of outcomes) {
    if ('unchanged' in outcome) console.log(`${outcome.api}: unchanged since its last release`);
    else console.log(`${outcome.api}: released ${outcome.released.version} on ${outcome.released.date} (specs/${outcome.api}/released/openapi.json)`);
  }
  return 0;
}

process.exitCode = main(process.argv.slice(2));
