// Whether generated/ was built from the specs/ that are here: npm run build:contract records a content hash of specs/
// in generated/specs.sha256, and npm start (and start:production) refuse to serve when specs/ hashes to another value.
// A content hash, not file times: a fresh clone, a checkout or a copy gives files arbitrary times. Hashing every spec
// file (about 300, 2 MB) takes a few milliseconds, against seconds for a rebuild.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** Where the build records the hash, relative to the project root. */
export const SPECS_HASH_FILE = 'generated/specs.sha256';

/** The files the build reads: YAML and JSON. Editors' swap, backup and probe files (`.x.swp`, `x~`, `4913`) never count. */
const SPEC_FILE = /^[^.].*\.(ya?ml|json)$/;

function specFiles(folder: string, relative: string, found: string[]): void {
  for (const entry of fs.readdirSync(path.join(folder, relative), { withFileTypes: true })) {
    const entryPath = relative ? `${relative}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      if (!entry.name.startsWith('.')) specFiles(folder, entryPath, found);
    } else if (SPEC_FILE.test(entry.name)) {
      found.push(entryPath);
    }
  }
}

/** Whether the spec sources are here at all: the Docker image ships generated/ without them. */
export function hasSpecSources(projectRoot: string): boolean {
  const specsDir = path.join(projectRoot, 'specs');
  if (!fs.existsSync(specsDir)) return false;
  return fs.readdirSync(specsDir, { withFileTypes: true }).some((entry) => entry.isDirectory() && fs.existsSync(path.join(specsDir, entry.name, 'openapi.yaml')));
}

/**
 * SHA-256 over every spec file's path (relative to specs/, `/`-separated, sorted) and contents. Line ends count as
 * `\n`, so that a checkout with CRLF line ends hashes as the commit does.
 */
export function hashSpecs(projectRoot: string): { sha256: string; files: number } {
  const specsDir = path.join(projectRoot, 'specs');
  const files: string[] = [];
  specFiles(specsDir, '', files);
  files.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const hash = createHash('sha256');
  for (const file of files) {
    hash.update(`${file}\0`);
    const bytes = fs.readFileSync(path.join(specsDir, file));
    hash.update(bytes.includes(13) ? Buffer.from(bytes.toString('latin1').replace(/\r\n/g, '\n'), 'latin1') : bytes);
    hash.update('\0');
  }
  return { sha256: hash.digest('hex'), files: files.length };
}

/** The contents of generated/specs.sha256 for a hash. */
export function renderSpecsHashFile({ sha256, files }: { sha256: string; files: number }): string {
  return [
    '# Generated from specs/ by npm run build:contract — do not edit.',
    '# The content hash of the spec files generated/ was built from; npm start refuses to serve when specs/ no longer has it.',
    `${sha256}  specs/ (${files} files)`,
    '',
  ].join('\n');
}

/** The hash recorded in generated/specs.sha256, or undefined when the file is missing or holds none. */
export function readRecordedSpecsHash(projectRoot: string): string | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path.join(projectRoot, SPECS_HASH_FILE), 'utf8');
  } catch {
    return undefined;
  }
  return /^([0-9a-f]{64}) {2}specs\//m.exec(text)?.[1];
}

/**
 * Why the generated files must not be served from this project root, with the command that fixes it; undefined when
 * they match specs/ (or when there are no spec sources to compare with).
 */
export function staleContractReason(projectRoot: string): string | undefined {
  if (!hasSpecSources(projectRoot)) return undefined;
  const recorded = readRecordedSpecsHash(projectRoot);
  if (recorded === undefined) {
    return `${SPECS_HASH_FILE} is missing, so generated/ cannot be shown to match specs/: run npm run build:contract (or npm run dev, which rebuilds on every save).`;
  }
  if (recorded !== hashSpecs(projectRoot).sha256) {
    return 'specs/ changed since generated/ was built, so what it serves may be an old contract: run npm run build:contract (or npm run dev, which rebuilds on every save), then start again.';
  }
  return undefined;
}
