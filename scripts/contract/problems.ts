// Problems found in a spec, reported all at once so that an author can fix them in one pass.

export interface ContractProblem {
  /** The spec file to change, relative to the repository root (e.g. `specs/portfolio/paths/pages.yaml`). */
  file: string;
  /** The operation, `$ref` or location inside the file, when there is one. */
  where?: string;
  /** What is wrong and what to change. */
  message: string;
}

export function formatProblem(problem: ContractProblem): string {
  return [problem.file, problem.where, problem.message].filter((part) => part !== undefined && part !== '').join(': ');
}

export class ContractBuildError extends Error {
  readonly problems: readonly ContractProblem[];

  constructor(problems: readonly ContractProblem[]) {
    const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
    super(`The contract has ${count}:\n${problems.map((problem) => `  - ${formatProblem(problem)}`).join('\n')}`);
    this.name = 'ContractBuildError';
    this.problems = problems;
  }
}
