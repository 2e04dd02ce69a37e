import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyProject, type ProjectCopy } from '../support/projectCopy.js';
import { editedFiles, readWalkthrough, type WalkthroughStep } from './walkthrough.js';

// Carries out docs/adding-an-operation.md step by step in a copy of the repository, as a reader
// would: every file it shows is written as shown, every command it names is run and must end as
// it says, with the output it quotes.

const repoRoot = path.resolve(import.meta.dirname, '../..');
const guide = fs.readFileSync(path.join(repoRoot, 'docs/adding-an-operation.md'), 'utf8');
const steps = readWalkthrough(guide);

// The walkthrough runs a test and the type check in the copy, so it takes test/ and the vitest
// configuration too.
let project: ProjectCopy | undefined;
let copy: string;
beforeAll(() => {
  project = copyProject('walkthrough-', ['test', 'vitest.config.ts']);
  copy = project.root;
});
afterAll(() => project?.remove());

function carryOut(step: WalkthroughStep): void {
  if (step.action === 'succeeds' || step.action === 'fails') {
    const [program = '', ...args] = step.command.split(' ');
    // spawnSync holds the event loop, so vitest's own timeout could not end a command that hangs: each has its own.
    const run = spawnSync(program, args, { cwd: copy, encoding: 'utf8', timeout: 240_000, killSignal: 'SIGKILL', env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' } });
    const output = `${run.stdout}${run.stderr}`;
    expect(run.error, `\`${step.command}\` did not end: ${run.error?.message}`).toBeUndefined();
    if (step.action === 'succeeds') expect(run.status, `\`${step.command}\` printed:\n${output}`).toBe(0);
    else {
      expect(run.status, `\`${step.command}\` should fail; it printed:\n${output}`).not.toBe(0);
      if (step.output !== undefined) expect(squeeze(output)).toContain(squeeze(step.output));
    }
    return;
  }
  const target = path.join(copy, step.file);
  if (step.action === 'create') {
    expect(fs.existsSync(target), `${step.file} exists before the walkthrough creates it`).toBe(false);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, step.text);
  } else if (step.action === 'append') {
    fs.appendFileSync(target, step.text);
  } else {
    const lines = fs.readFileSync(target, 'utf8').split('\n');
    const at = lines.indexOf(step.line);
    expect(at, `${step.file} has a line "${step.line}"`).toBeGreaterThanOrEqual(0);
    lines.splice(at + 1, 0, ...step.text.replace(/\n$/, '').split('\n'));
    fs.writeFileSync(target, lines.join('\n'));
  }
}

/** Line breaks and runs of spaces as one space: the guide wraps what a terminal prints on one line. */
function squeeze(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

describe('docs/adding-an-operation.md', () => {
  it('names as many hand-edited files as it edits', () => {
    const stated = /\*\*(\d+) files\*\*/.exec(guide);
    expect(stated, 'the guide says "**N files**"').not.toBeNull();
    expect(editedFiles(steps)).toHaveLength(Number(stated?.[1]));
  });

  it('works as written, step by step', { timeout: 900_000 }, () => {
    expect(steps.filter((step) => step.action === 'succeeds').length).toBeGreaterThan(0);
    for (const step of steps) carryOut(step);
  });
});
