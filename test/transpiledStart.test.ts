// scripts/runTranspiled.mjs, how npm start, worker, admin and mcp run the sources: transpiled once for the files as
// they are, into .cache/transpiled-sources/ of the project, each folder kept while a process runs from it. Run in a
// copy of the project, whose sources the tests edit.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { copyProject, type ProjectCopy } from './support/projectCopy.js';
import { startServerProcess, stopServerProcesses } from './support/serverProcess.js';

const copy: ProjectCopy = copyProject('contract-api-transpiled-start-');
afterAll(() => copy.remove());

function runner(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['scripts/runTranspiled.mjs', ...args], { cwd: copy.root, env: { ...process.env, NODE_OPTIONS: '' } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const folders = () => readdirSync(copy.file('.cache/transpiled-sources')).sort();
const users = (folder: string) => readdirSync(copy.file(path.join('.cache/transpiled-sources', folder, '.users')));

describe('npm start from the sources transpiled (scripts/runTranspiled.mjs)', () => {
  it('runs the sources as they are now, and removes a folder no process has run from for a minute', async () => {
    const help = await runner(['src/server.ts', '--help']);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^Usage: npm start/);
    const [first] = folders();
    expect(folders()).toEqual([first]);
    expect(users(first!)).toEqual([]);

    const server = await startServerProcess({ DATABASE_PATH: copy.file('data/app.db'), WEBHOOK_WORKER: 'off' }, undefined, copy.root);
    try {
      expect(users(first!)).toEqual([String(server.child.pid)]);
      const serverSource = copy.file('src/server.ts');
      writeFileSync(serverSource, readFileSync(serverSource, 'utf8').replace('Usage: npm start', 'Usage (edited): npm start'));
      const edited = await runner(['src/server.ts', '--help']);
      expect(edited.stdout).toMatch(/^Usage \(edited\): npm start/);
      // The running server's folder stays, beside the edited sources' one.
      expect(folders()).toHaveLength(2);
      expect(folders()).toContain(first);
    } finally {
      await stopServerProcesses([server.child]);
    }
    expect(users(first!)).toEqual([]);
    // Kept for a minute after its last user: a start of those sources may be about to mark it.
    const again = await runner(['src/server.ts', '--help']);
    expect(again.stdout).toMatch(/^Usage \(edited\): npm start/);
    expect(folders()).toContain(first);
    const anHourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(copy.file(path.join('.cache/transpiled-sources', first!, '.users')), anHourAgo, anHourAgo);
    await runner(['src/server.ts', '--help']);
    expect(folders()).toHaveLength(1);
    expect(folders()).not.toContain(first);
  }, 60_000);

  it('starts nothing when a source does not parse, and says which and where', async () => {
    const broken = copy.file('src/brokenOnPurpose.ts');
    writeFileSync(broken, 'export const answer = ;\n');
    try {
      const result = await runner(['src/server.ts']);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('src/brokenOnPurpose.ts:1:');
      expect(result.stderr).toContain('the TypeScript sources could not be transpiled (esbuild printed why above): nothing was started.');
      expect(result.stdout).toBe('');
      expect(folders().filter((folder) => folder.includes('.making-'))).toEqual([]);
    } finally {
      writeFileSync(broken, 'export const answer = 42;\n');
    }
  }, 60_000);

  it('refuses an entry that is not among the sources it runs, with its usage', async () => {
    const result = await runner(['scripts/dev.ts']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'scripts/dev.ts is not among the sources it runs (src/, generated/, db/).\nUsage: node [node flags] scripts/runTranspiled.mjs <src/…/entry.ts> [arguments of the entry]\n',
    );
    const help = await runner(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: node \[node flags\] scripts\/runTranspiled\.mjs/);
  });
});
