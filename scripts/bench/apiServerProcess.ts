// The server as `npm start` runs it, a child process of the bench in production mode with the
// bench's settings: no response validation, no request log, no demo data, no webhook worker, the
// portfolio limit lifted. `environment` selects the engine (DATABASE_PATH, or DATABASE_URL with
// REDIS_URL and the shared secrets); DATABASE_URL and REDIS_URL are emptied unless given, so that
// a bench meant for SQLite never reaches an engine the bench's own environment names.
import type { ChildProcess } from 'node:child_process';
import { startBenchProcess } from './benchProcess.js';

export interface ApiServerProcess {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** The bench's settings of a server process (see above); an engine's variables go on top. */
export const benchServerEnvironment: Readonly<Record<string, string>> = {
  DATABASE_URL: '',
  REDIS_URL: '',
  PORT: '0',
  HOST: '127.0.0.1',
  RESPONSE_VALIDATION: 'off',
  LOG_REQUESTS: 'off',
  DEMO_DATA: 'off',
  WEBHOOK_WORKER: 'off',
  PORTFOLIO_RATE_LIMIT: '1000000000',
};

export async function startApiServer(options: { environment: Record<string, string>; cpuProfileDir?: string; name?: string }): Promise<ApiServerProcess> {
  const server = await startBenchProcess({
    script: 'start',
    nodeArguments: options.cpuProfileDir ? ['--cpu-prof', '--cpu-prof-dir', options.cpuProfileDir] : [],
    env: { ...benchServerEnvironment, ...options.environment },
    ready: /listening on (http:\/\/\S+)/,
    name: options.name ?? 'the server',
    // The server forces its own exit 15 s after SIGTERM.
    stopDeadlineMs: 20_000,
  });
  return { url: server.ready[1]!, child: server.child, stop: server.stop };
}
