// npm start serves generated/ only when it was built from the specs/ that are here (src/contract/specsHash.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hashSpecs, readRecordedSpecsHash, renderSpecsHashFile, SPECS_HASH_FILE, staleContractReason } from '../../src/contract/specsHash.js';
import { copyProject, type ProjectCopy } from '../support/projectCopy.js';
import { runServerProcess } from '../support/serverProcess.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const folders: string[] = [];
const copies: ProjectCopy[] = [];
afterAll(() => {
  for (const folder of folders) fs.rmSync(folder, { recursive: true, force: true });
  for (const copy of copies) copy.remove();
});

/** A project root holding only specs/ (one API) and, when given, generated/specs.sha256. */
function tinyProject(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'specs-hash-'));
  folders.push(root);
  fs.mkdirSync(path.join(root, 'specs/tiny/paths'), { recursive: true });
  fs.writeFileSync(path.join(root, 'specs/tiny/openapi.yaml'), 'openapi: 3.1.0\ninfo: {title: Tiny, version: 1.0.0}\n');
  fs.writeFileSync(path.join(root, 'specs/tiny/paths/items.yaml'), 'get:\n  summary: Items\n');
  return root;
}

function record(root: string): void {
  fs.mkdirSync(path.join(root, 'generated'), { recursive: true });
  fs.writeFileSync(path.join(root, SPECS_HASH_FILE), renderSpecsHashFile(hashSpecs(root)));
}

describe('the specs/ content hash', () => {
  it('is what the committed generated/specs.sha256 records (npm run build:contract when this fails)', () => {
    expect(readRecordedSpecsHash(repoRoot)).toBe(hashSpecs(repoRoot).sha256);
    expect(staleContractReason(repoRoot)).toBeUndefined();
  });

  it('changes with a file\'s contents, a new file and a renamed one, never with file times', () => {
    const root = tinyProject();
    record(root);
    expect(staleContractReason(root)).toBeUndefined();
    const items = path.join(root, 'specs/tiny/paths/items.yaml');
    fs.utimesSync(items, new Date('2001-01-01T00:00:00Z'), new Date('2001-01-01T00:00:00Z'));
    expect(staleContractReason(root)).toBeUndefined();

    fs.writeFileSync(items, 'get:\n  summary: Every item\n');
    expect(staleContractReason(root)).toMatch(/^specs\/ changed since generated\/ was built.*: run npm run build:contract/);
    record(root);
    fs.writeFileSync(path.join(root, 'specs/tiny/paths/more.yaml'), 'get: {}\n');
    expect(staleContractReason(root)).toBeDefined();
    record(root);
    fs.renameSync(path.join(root, 'specs/tiny/paths/more.yaml'), path.join(root, 'specs/tiny/paths/other.yaml'));
    expect(staleContractReason(root)).toBeDefined();
  });

  it('ignores editors\' swap, backup and probe files, and CRLF line ends', () => {
    const root = tinyProject();
    record(root);
    for (const name of ['.items.yaml.swp', 'items.yaml~', '4913', '.#items.yaml']) fs.writeFileSync(path.join(root, 'specs/tiny/paths', name), 'anything');
    expect(staleContractReason(root)).toBeUndefined();
    const items = path.join(root, 'specs/tiny/paths/items.yaml');
    fs.writeFileSync(items, fs.readFileSync(items, 'utf8').replace(/\n/g, '\r\n'));
    expect(staleContractReason(root)).toBeUndefined();
  });

  it('names the build when nothing is recorded, and checks nothing where no spec sources are shipped (the Docker image)', () => {
    const root = tinyProject();
    expect(staleContractReason(root)).toMatch(/generated\/specs\.sha256 is missing.*run npm run build:contract/);
    fs.rmSync(path.join(root, 'specs/tiny/openapi.yaml'));
    expect(staleContractReason(root)).toBeUndefined();
  });
});

describe('npm start after a spec edit', () => {
  it('refuses to serve the old contract, naming the command to run', async () => {
    const copy = copyProject('specs-hash-start-');
    copies.push(copy);
    const specFile = copy.file('specs/work-platform/openapi.yaml');
    fs.writeFileSync(specFile, fs.readFileSync(specFile, 'utf8').replace(/^( {2}title: .*)$/m, '$1 (edited)'));
    const started = await runServerProcess({ DATABASE_PATH: copy.file('data/app.db') }, { cwd: copy.root, timeoutMs: 30_000 });
    expect(started.code).toBe(1);
    expect(started.stderr).toContain('Not starting: specs/ changed since generated/ was built');
    expect(started.stderr).toContain('run npm run build:contract');
    expect(started.stdout).not.toContain('listening on');
    // Refused before the database was opened.
    expect(fs.existsSync(copy.file('data/app.db'))).toBe(false);
  });
});
