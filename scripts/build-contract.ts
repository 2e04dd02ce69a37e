// CLI of the spec compiler; the work is done in scripts/contract/.
//   npm run build:contract   write generated/<api>/* for every specs/<api>/openapi.yaml
//   npm run check:contract   fail when generated/ differs from a fresh build

import { fileURLToPath } from 'node:url';
import { buildContracts, compareWithDisk, writeGeneratedFiles, type FileDifference } from './contract/build.js';
import { ContractBuildError } from './contract/problems.js';

const USAGE = `Usage: tsx scripts/build-contract.ts [--check] [--help]

Compiles every specs/<api>/openapi.yaml into generated/<api>/:
  openapi.json, openapi.yaml  the bundled document (internal $refs only)
  postman.json                a Postman v2.1 collection with a status test per request
  types.ts                    openapi-typescript types

Fails, listing every problem, when a spec breaks a convention (operationId, tags, summary,
x-ratelimit-class, x-required-scopes, path parameter examples, 401/429/500 on protected operations,
resolvable response schemas and headers).

Options:
  --check   build in memory and compare with generated/; exit 1 when a file is stale or missing
  --help    print this message`;

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

function describeDifference(difference: FileDifference): string {
  switch (difference.kind) {
    case 'missing':
      return `  missing:    ${difference.path}`;
    case 'stale':
      return `  stale:      ${difference.path}`;
    case 'unexpected':
      return `  unexpected: ${difference.path} (no spec produces it; delete it)`;
  }
}

async function main(args: string[]): Promise<number> {
  const unknown = args.filter((arg) => arg !== '--check' && arg !== '--help' && arg !== '-h');
  if (args.includes('--help') || args.includes('-h')) {
    console.log(USAGE);
    return 0;
  }
  if (unknown.length > 0) {
    console.error(`Unknown argument: ${unknown.join(' ')}\n\n${USAGE}`);
    return 2;
  }
  const check = args.includes('--check');

  let files;
  try {
    files = await buildContracts(REPO_ROOT);
  } catch (error) {
    if (error instanceof ContractBuildError) {
      console.error(error.message);
      console.error('Fix the spec files named above, then run npm run build:contract again.');
      return 1;
    }
    throw error;
  }

  if (check) {
    const differences = compareWithDisk(REPO_ROOT, files);
    const outOfDate = differences.filter((difference) => difference.kind !== 'unexpected');
    if (differences.length > 0) {
      console.error('generated/ is not what the specs produce:');
      for (const difference of differences) console.error(describeDifference(difference));
      if (outOfDate.length > 0) console.error('run npm run build:contract and commit the result.');
      return 1;
    }
    console.log(`check:contract OK: ${files.length} generated files match the specs.`);
    return 0;
  }

  writeGeneratedFiles(REPO_ROOT, files);
  for (const file of files) console.log(`wrote ${file.path}`);
  for (const difference of compareWithDisk(REPO_ROOT, files)) console.warn(describeDifference(difference));
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
