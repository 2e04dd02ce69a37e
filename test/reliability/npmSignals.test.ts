// A supervisor that signals the npm process (a container whose command is `npm start`, PM2, a shell
// script) reaches the server: npm hands SIGTERM to its child, and every script that runs a long-lived
// process makes its shell become that process (`exec`), so the child is the server itself.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeDemoDatabaseFile, type DemoDatabaseFile } from '../support/serverProcess.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const scripts = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

/** Scripts that run one process for as long as someone lets them (servers, workers, relays, the bench, the admin CLI). */
const longLived = ['start', 'dev', 'worker', 'start:production', 'worker:production', 'scaled-out', 'mcp', 'webhook:receiver', 'bench', 'conformance', 'admin', 'admin:production'];

let database: DemoDatabaseFile | undefined;
afterAll(() => database?.remove());

describe('npm scripts and signals', () => {
  it.each(longLived)('npm run %s execs its process, so that a signal to npm reaches it', (name) => {
    // Environment assignments may come first (`MALLOC_ARENA_MAX=2 exec node …`): they apply to the exec'd process.
    expect(scripts[name], name).toMatch(/^(?:[A-Z_][A-Z0-9_]*=\S*\s+)*exec (node|tsx) /);
  });

  it('SIGTERM to the npm process alone: the server drains, exits 0 and the port closes', async () => {
    database = await makeDemoDatabaseFile('contract-api-npm-signal-');
    const npm = spawn('npm', ['run', '--silent', 'start'], {
      cwd: repoRoot,
      detached: false,
      env: { ...process.env, DATABASE_PATH: database.databasePath, PORT: '0', HOST: '127.0.0.1', DEMO_DATA: 'off', WEBHOOK_WORKER: 'off', LOG_REQUESTS: 'off' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const url = await new Promise<string>((resolve, reject) => {
      npm.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /listening on (http:\/\/\S+)/.exec(output);
        if (match) resolve(match[1]!);
      });
      npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      npm.once('exit', (code) => reject(new Error(`npm exited with ${code}: ${output}`)));
    });
    expect((await fetch(`${url}/api/v1/openapi.json`)).status).toBe(200);
    const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
    // Only npm's own pid: not its process group.
    process.kill(npm.pid!, 'SIGTERM');
    expect(await exited).toBe(0);
    expect(output).toContain('SIGTERM received');
    expect(output).toContain('Stopped.');
    const { port, hostname } = new URL(url);
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect(Number(port), hostname);
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', () => resolve(true));
    });
    expect(refused).toBe(true);
  }, 60_000);
});
