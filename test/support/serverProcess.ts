import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { npmScriptNodeArguments } from '../../scripts/npmScriptArguments.js';

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
}

/**
 * `npm start` as a child process (its node arguments from package.json) on the given environment; resolves with the
 * URL it prints once listening. Several may share one database file.
 */
export function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  const child = spawn(process.execPath, npmScriptNodeArguments('start'), {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', RESPONSE_VALIDATION: 'enforce', LOG_REQUESTS: 'off', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/[^\s]+)/.exec(output);
      if (match) resolve({ child, url: match[1]!, output: () => output });
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`)));
  });
}

/** SIGTERM to each child (a graceful shutdown); resolves with their exit codes. */
export async function stopServerProcesses(children: ChildProcess[]): Promise<(number | null)[]> {
  const exits = children.map(
    (child) =>
      new Promise<number | null>((resolve) => {
        if (child.exitCode !== null) resolve(child.exitCode);
        else child.once('exit', (code) => resolve(code));
      }),
  );
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  return Promise.all(exits);
}

export interface WorkerProcess {
  child: ChildProcess;
  workerId: string;
  /** Everything it has written to stdout and stderr so far. */
  output: () => string;
}

/** `npm run worker` (src/worker.ts) as a child process on `env`; resolves once it has printed that it started. */
export function startWorkerProcess(env: Record<string, string>): Promise<WorkerProcess> {
  const child = spawn(process.execPath, npmScriptNodeArguments('worker'), { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Webhook delivery worker (wkr_[A-Za-z0-9]+) started/.exec(output);
      if (match) resolve({ child, workerId: match[1]!, output: () => output });
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code) => reject(new Error(`worker exited with ${code}: ${output}`)));
  });
}

/** `npm run worker` with `args` on `env`, run to its exit (a help text, a refused start); fails after `timeoutMs`. */
export function runWorkerProcess(args: string[], env: Record<string, string> = {}, timeoutMs = 20_000): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [...npmScriptNodeArguments('worker'), ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: timeoutMs,
  });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * A self-signed certificate for `hostName` (and its key), made by `openssl` for a local TLS
 * receiver. Throws when openssl is missing: the TLS tests need it.
 */
export function selfSignedCertificate(hostName: string): { key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(path.join(tmpdir(), 'test-tls-'));
  try {
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=${hostName}`, '-addext', `subjectAltName=DNS:${hostName}`,
        '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(path.join(dir, 'key.pem')), cert: readFileSync(path.join(dir, 'cert.pem')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
