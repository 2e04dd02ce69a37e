import { spawn, type ChildProcess } from 'node:child_process';
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
