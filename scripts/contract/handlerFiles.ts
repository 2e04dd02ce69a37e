// Every operation has its handler file, src/<api>/operations/<operationId>.ts, exporting a const
// of that name; every file there handles an operation of the spec. The server loads handlers by
// this convention, so a mismatch found here would otherwise stop it at start-up.

import fs from 'node:fs';
import path from 'node:path';
import { listOperations, type JsonObject } from './document.js';
import type { ContractProblem } from './problems.js';

/** `work-platform` → `workPlatform`: the source folder of an API. */
export function sourceFolderOf(api: string): string {
  return api.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

export function checkHandlerFiles(repoRoot: string, api: string, document: JsonObject): ContractProblem[] {
  const folder = `src/${sourceFolderOf(api)}/operations`;
  const directory = path.join(repoRoot, folder);
  if (!fs.existsSync(path.join(repoRoot, 'src'))) return [];
  const files = new Set(fs.existsSync(directory) ? fs.readdirSync(directory).filter((name) => name.endsWith('.ts')) : []);
  const problems: ContractProblem[] = [];
  const operationIds = new Set<string>();
  for (const { operationId, method, path: route } of listOperations(document)) {
    if (operationId === undefined) continue;
    operationIds.add(operationId);
    const file = `${folder}/${operationId}.ts`;
    if (!files.has(`${operationId}.ts`)) {
      problems.push({
        file,
        where: `${method.toUpperCase()} ${route} (${operationId})`,
        message: `the operation has no handler; create ${file} with \`export const ${operationId}: <Api>Handler<'${operationId}'> = (ctx) => …\` (see docs/adding-an-operation.md)`,
      });
      continue;
    }
    const source = fs.readFileSync(path.join(directory, `${operationId}.ts`), 'utf8');
    if (!new RegExp(`export (const|function|async function) ${operationId}\\b`).test(source)) {
      problems.push({ file, message: `exports no \`${operationId}\`; the server calls the export named after the operation` });
    }
  }
  for (const name of files) {
    const operationId = name.slice(0, -'.ts'.length);
    if (!operationIds.has(operationId)) {
      problems.push({
        file: `${folder}/${name}`,
        message: `no operation of specs/${api} has operationId ${operationId}; rename the file after its operation, move shared code out of ${folder}/, or delete it`,
      });
    }
  }
  return problems;
}
