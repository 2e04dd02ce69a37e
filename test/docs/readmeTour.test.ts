import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSlowDnsServer, type SlowDnsServer } from '../../scripts/bench/slowDnsServer.js';
import { freePort } from '../support/freePort.js';
import { startServerProcess, type ServerProcess } from '../support/serverProcess.js';

// Takes the README's five-minute tour as a reader would: `npm start` on an empty database, the
// banner it prints, then every curl command of the tour with the demo key and token from that
// banner, and Ctrl-C. What the README quotes must be what they print, but for what differs from
// one start to the next (ids, keys, times, the port and the database path) and what it leaves out
// with "…". The demo webhook's target is resolved by a local DNS server that knows no name, so its
// failed attempt is the same on a machine with or without the internet.

const execFileAsync = promisify(execFile);
const repoRoot = path.resolve(import.meta.dirname, '../..');
const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
const tour = /^## A five-minute tour\n([\s\S]*?)^## /m.exec(readme)?.[1] ?? '';
const blocks = [...tour.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map(([, language = '', text = '']) => ({ language, text }));
const textBlocks = blocks.filter((block) => block.language === 'text');
const shellBlocks = blocks.filter((block) => block.language === 'sh');

interface TourCommand {
  command: string;
  /** What the README quotes under the command, line by line; `…` stands for anything. */
  expected: string[];
}

/** A block's commands (a trailing `\` continues one), each with the `# ` lines after it; `#  ` continues a quoted line that was wrapped. Assignments are the reader's copying, done by the test itself. */
function commandsOf(block: string): TourCommand[] {
  const commands: TourCommand[] = [];
  for (const line of block.split('\n')) {
    const last = commands.at(-1);
    if (line.startsWith('#  ') && last) last.expected[last.expected.length - 1] += line.slice(3);
    else if (line.startsWith('# ') && last) last.expected.push(line.slice(2));
    else if (last?.command.endsWith('\\')) last.command = `${last.command.slice(0, -1)} ${line.trim()}`;
    else if (line.trim() !== '' && !/^[A-Z_]+=\S+/.test(line)) commands.push({ command: line, expected: [] });
  }
  return commands;
}

/** What changes from one start to the next, in the same words on both sides. */
function normalized(text: string): string {
  return text
    .replace(/\b(req|tsk|dlv|evt|wkr)_[A-Za-z0-9]+/g, '$1_*')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, '<time>')
    .replace(/\bpfk_[\w-]+/g, 'pfk_*')
    .replace(/\bsvc_pat_[\w-]+/g, 'svc_pat_*')
    .replace(/\beyJ[\w.-]+…?/g, '<token>')
    .replace(/(database: +)\S+/g, '$1<path>');
}

/** Each quoted piece (a line cut at every `…`) is found in the output, in the README's order. */
function missingPieces(output: string, expected: string[]): string[] {
  const actual = normalized(output);
  const missing: string[] = [];
  let from = 0;
  for (const piece of expected.flatMap((line) => line.split('…')).map(normalized)) {
    if (piece.trim() === '') continue;
    const at = actual.indexOf(piece, from);
    if (at < 0) missing.push(piece);
    else from = at + piece.length;
  }
  return missing;
}

describe("the README's five-minute tour", () => {
  let server: ServerProcess;
  let dns: SlowDnsServer;
  let port: number;
  let dataDir: string;
  const variables: Record<string, string> = {};

  beforeAll(async () => {
    dns = await startSlowDnsServer({});
    port = await freePort();
    dataDir = fs.mkdtempSync(path.join(tmpdir(), 'readme-tour-'));
    server = await startServerProcess({
      DATABASE_PATH: path.join(dataDir, 'data', 'app.db'),
      HOST: '0.0.0.0',
      PORT: String(port),
      PUBLIC_BASE_URL: `http://localhost:${port}`,
      WEBHOOK_DNS_SERVERS: dns.address,
    });
    for (let waited = 0; !server.output().includes('More demo keys and tokens') && waited < 10_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    variables.KEY = /"apiKey": "([^"]+)"/.exec(server.output())?.[1] ?? '';
    variables.TOKEN = /Bearer (svc_pat_[\w-]+)/.exec(server.output())?.[1] ?? '';
  });
  afterAll(async () => {
    if (server?.child.exitCode === null) server.child.kill('SIGKILL');
    await dns?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('has the banner, its commands and the shutdown to check', () => {
    expect(textBlocks).toHaveLength(2);
    expect(shellBlocks.length).toBeGreaterThanOrEqual(7);
    expect(shellBlocks.flatMap((block) => commandsOf(block.text)).length).toBeGreaterThanOrEqual(10);
  });

  it('quotes the banner that npm start prints on an empty database', () => {
    const banner = textBlocks[0]!.text.trimEnd().split('\n');
    const printed = server.output().replaceAll(`:${port}`, ':3000').split('\n');
    const start = printed.findIndex((line) => line.startsWith('Contract API server listening'));
    expect(start).toBeGreaterThanOrEqual(0);
    expect(printed.slice(start, start + banner.length).map(normalized)).toEqual(banner.map(normalized));
  });

  it('runs every command with the demo key and token, and each prints what the README quotes', async () => {
    expect(variables.KEY).toMatch(/^pfk_/);
    expect(variables.TOKEN).toMatch(/^svc_pat_/);
    for (const { command, expected } of shellBlocks.flatMap((block) => commandsOf(block.text))) {
      const run = () => execFileAsync('bash', ['-c', command.replaceAll('localhost:3000', `localhost:${port}`)], { env: { ...process.env, ...variables }, timeout: 20_000 });
      let { stdout } = await run();
      // A delivery is attempted just after the change commits: the log may not show the attempt yet.
      for (let tries = 0; command.includes('/deliveries') && missingPieces(stdout, expected).length > 0 && tries < 40; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        ({ stdout } = await run());
      }
      expect(missingPieces(stdout, expected), `${command}\nprinted:\n${stdout}`).toEqual([]);
      const created = /^location: \/v1\/tasks\/(tsk_\w+)/im.exec(stdout);
      if (created) variables.TASK = created[1]!;
    }
    expect(variables.TASK).toMatch(/^tsk_/);
  });

  it('drains and stops on Ctrl-C as quoted', async () => {
    const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
    server.child.kill('SIGINT');
    expect(await exited).toBe(0);
    const shutdown = textBlocks[1]!.text.trimEnd().split('\n');
    expect(missingPieces(server.output(), shutdown)).toEqual([]);
  });
});
