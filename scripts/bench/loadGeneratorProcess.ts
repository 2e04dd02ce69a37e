// Runs scripts/bench/loadGenerator.ts in a process of its own and reads its one line of figures.
import { execFile } from 'node:child_process';
import path from 'node:path';
import type { LoadResult, LoadScenario } from './loadGenerator.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');

export function runLoadGenerator(scenario: LoadScenario, name: string): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', path.join(repoRoot, 'scripts/bench/loadGenerator.ts'), JSON.stringify(scenario)],
      { cwd: repoRoot, maxBuffer: 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`the load generator failed on ${name}: ${stderr || error.message}`));
        else resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as LoadResult);
      },
    );
  });
}
