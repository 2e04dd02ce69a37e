import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// The README is the front door and docs/ holds one guide per area: every link between them must
// reach a file that exists and, with a #fragment, a heading of that file.

const repoRoot = path.resolve(import.meta.dirname, '../..');
const documents = ['README.md', ...fs.readdirSync(path.join(repoRoot, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

/** GitHub's anchor for a heading: lower case, punctuation dropped (hyphens and underscores kept), each space a hyphen. */
function anchorOf(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/ /g, '-');
}

/** Markdown text outside fenced code blocks, where a link or a heading means what it says. */
function proseOf(markdown: string): string {
  let inFence = false;
  return markdown
    .split('\n')
    .filter((line) => {
      if (line.startsWith('```')) inFence = !inFence;
      return !inFence && !line.startsWith('```');
    })
    .join('\n');
}

function anchorsOf(file: string): Set<string> {
  const prose = proseOf(fs.readFileSync(path.join(repoRoot, file), 'utf8'));
  return new Set([...prose.matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchorOf(match[1]!)));
}

describe('links of the README and docs/', () => {
  it.each(documents)('%s: every relative link reaches a file, and its #fragment a heading there', (document) => {
    const prose = proseOf(fs.readFileSync(path.join(repoRoot, document), 'utf8'));
    const broken: string[] = [];
    for (const [, target = ''] of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue;
      const [file = '', fragment] = target.split('#');
      const resolved = file === '' ? document : path.posix.normalize(path.posix.join(path.posix.dirname(document), file));
      if (!fs.existsSync(path.join(repoRoot, resolved))) broken.push(`${target}: no file ${resolved}`);
      else if (fragment !== undefined && resolved.endsWith('.md') && !anchorsOf(resolved).has(fragment)) broken.push(`${target}: no heading #${fragment} in ${resolved}`);
    }
    expect(broken).toEqual([]);
  });

  it('README.md stays the front door: the two commands, at most about 250 lines, and a link to every guide', () => {
    const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
    expect(readme).toContain('```sh\nnpm install && npm start\n```');
    expect(readme).toContain('```sh\nnpm install && npm test\n```');
    expect(readme.split('\n').length).toBeLessThanOrEqual(260);
    for (const guide of documents.filter((document) => document !== 'README.md')) expect(readme, guide).toContain(`](${guide})`);
  });
});
