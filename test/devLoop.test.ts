// npm run dev (scripts/dev.ts) on a copy of the project: a spec save rebuilds the contract and restarts the server; a
// spec that does not build, or a source that does not start, leaves the last good server serving.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { npmScriptNodeArguments } from '../scripts/npmScriptArguments.js';
import { freePort } from './support/freePort.js';
import { copyProject, type ProjectCopy } from './support/projectCopy.js';

let copy: ProjectCopy | undefined;
let dev: ChildProcess | undefined;
afterAll(() => {
  if (dev && dev.exitCode === null && dev.signalCode === null) dev.kill('SIGKILL');
  copy?.remove();
});

/** Everything the loop and its servers printed, and a wait for the next line matching a pattern after a mark. */
function watchOutput(child: ChildProcess) {
  let output = '';
  const listeners = new Set<() => void>();
  const append = (chunk: Buffer) => {
    output += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  return {
    text: () => output,
    mark: () => output.length,
    /** The first match of `pattern` in what was printed after `from`; rejects when the loop exits first. */
    next(pattern: RegExp, from: number): Promise<RegExpExecArray> {
      return new Promise((resolve, reject) => {
        const done = () => {
          listeners.delete(check);
          child.off('exit', exited);
          clearTimeout(timer);
        };
        const check = () => {
          const match = pattern.exec(output.slice(from));
          if (match) (done(), resolve(match));
        };
        const exited = () => (done(), reject(new Error(`npm run dev exited before printing ${pattern}:\n${output}`)));
        // Named in the failure with what was printed, rather than a bare test time-out.
        const timer = setTimeout(() => (done(), reject(new Error(`npm run dev printed no ${pattern} within ${PRINT_TIMEOUT_MS / 1000} s:\n${output.slice(from)}`))), PRINT_TIMEOUT_MS);
        listeners.add(check);
        child.once('exit', exited);
        check();
      });
    },
  };
}

/** How long one step (a build and a server start, on a loaded machine) may take. */
const PRINT_TIMEOUT_MS = 60_000;
const SERVING = /\[dev\] serving (http:\/\/\S+) \(server pid (\d+)/;

/**
 * On a connection of its own: a kept-alive one may belong to the server being replaced, which closes
 * it as it stops (a browser sends such a request again; fetch reports "other side closed").
 */
async function servedTitle(url: string): Promise<string> {
  const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    http
      .get(`${url}/v1/openapi.json`, { agent: false }, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
        response.on('error', reject);
      })
      .on('error', reject);
  });
  expect(status).toBe(200);
  return (JSON.parse(body) as { info: { title: string } }).info.title;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Resolves once `condition` holds, checking every 50 ms; fails after `timeoutMs`. */
async function until(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('npm run dev', () => {
  it('rebuilds and restarts after a spec save, keeps the last good server on a broken spec or source, and stops on SIGTERM', async () => {
    copy = copyProject('dev-loop-');
    const specFile = copy.file('specs/work-platform/openapi.yaml');
    const startUpFile = copy.file('src/app.ts');
    const originalSpec = fs.readFileSync(specFile, 'utf8');
    const withTitle = (title: string) => originalSpec.replace(/^( {2}title: ).*$/m, `$1${title}`);
    const port = await freePort();
    dev = spawn(process.execPath, npmScriptNodeArguments('dev'), {
      cwd: copy.root,
      env: { ...process.env, NODE_OPTIONS: '', PORT: String(port), HOST: '127.0.0.1', DATABASE_PATH: copy.file('data/app.db'), LOG_REQUESTS: 'off', WEBHOOK_WORKER: 'off' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = watchOutput(dev);
    const exited = new Promise<number | null>((resolve) => dev!.once('exit', resolve));

    const [, url, firstPid] = await output.next(SERVING, 0);
    expect(url).toBe(`http://127.0.0.1:${port}`);
    const originalTitle = await servedTitle(url!);

    // A spec save: rebuilt, and served by a new server that replaced the first.
    let mark = output.mark();
    fs.writeFileSync(specFile, withTitle('Work-Platform API, edited'));
    const [, , secondPid] = await output.next(SERVING, mark);
    expect(secondPid).not.toBe(firstPid);
    // The server started ahead of time (modules loaded, told to start once it listens for that) took over.
    expect(output.text().slice(mark)).toMatch(/ms after the save, started ahead of time\)/);
    expect(output.text().slice(mark)).toMatch(/\[dev\] contract built.* in \d+ ms: .*generated\/work-platform\/openapi\.json/);
    for (let i = 0; i < 8; i++) expect(await servedTitle(url!)).toBe('Work-Platform API, edited');
    expect(originalTitle).not.toBe('Work-Platform API, edited');
    await until(() => !isRunning(Number(firstPid)), 'the replaced server to exit');
    expect(fs.readFileSync(copy.file('generated/work-platform/openapi.json'), 'utf8')).toContain('"title": "Work-Platform API, edited"');

    // A spec that does not build: the problem is printed, generated/ and the server stay as they were.
    mark = output.mark();
    fs.writeFileSync(specFile, withTitle('Never served').replace(/^paths:$/m, 'paths:\n  /broken:\n    $ref: ./paths/no-such-file.yaml'));
    await output.next(/keeps serving; fix the spec and save/, mark);
    expect(output.text().slice(mark)).toContain('no-such-file.yaml');
    expect(output.text().slice(mark)).not.toMatch(SERVING);
    expect(await servedTitle(url!)).toBe('Work-Platform API, edited');
    expect(isRunning(Number(secondPid))).toBe(true);
    expect(fs.readFileSync(copy.file('generated/work-platform/openapi.json'), 'utf8')).not.toContain('Never served');

    // Fixed: built and served again.
    mark = output.mark();
    fs.writeFileSync(specFile, withTitle('Work-Platform API, fixed'));
    const [, , thirdPid] = await output.next(SERVING, mark);
    // Every new connection, from the line on: the replaced server no longer shares the port.
    for (let i = 0; i < 8; i++) expect(await servedTitle(url!)).toBe('Work-Platform API, fixed');

    // A source that does not load: the new server exits before serving, the last good one keeps serving.
    mark = output.mark();
    fs.appendFileSync(startUpFile, '\nexport const broken = ;\n');
    await output.next(/the new server exited before serving .*; the last good server \(pid (\d+)\) keeps serving/, mark);
    // Not the one started ahead of time: its modules were loaded before the source changed.
    expect(output.text().slice(mark)).not.toContain('started ahead of time');
    expect(output.text().slice(mark)).toContain(`the last good server (pid ${thirdPid}) keeps serving`);
    expect(await servedTitle(url!)).toBe('Work-Platform API, fixed');

    // SIGTERM: the server stops gracefully, then the loop.
    dev.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output.text()).toContain('[dev] stopped.');
    expect(isRunning(Number(thirdPid))).toBe(false);
    await expect(fetch(`${url}/v1/openapi.json`)).rejects.toThrow();
  }, 240_000);

  it('explains itself with --help', async () => {
    const child = spawn(process.execPath, [...npmScriptNodeArguments('dev'), '--help'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } });
    const output = watchOutput(child);
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(0);
    expect(output.text()).toMatch(/^Usage: npm run dev/);
    expect(output.text()).toContain('the last good server keeps');
  });
});
