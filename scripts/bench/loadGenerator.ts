// The load generator, in a process of its own so that it takes no CPU from the process it
// measures: wrk (C, one thread) when it is installed, else autocannon (JavaScript, which tops out
// near what bare node:http serves on one core, so it understates the references). The result is
// printed as one JSON line.
//   tsx scripts/bench/loadGenerator.ts '<scenario JSON>'
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { generatorSignals } from './loadGeneratorProcess.js';

export interface LoadScenario {
  url: string;
  connections: number;
  seconds: number;
  headers?: Record<string, string>;
  /** POST /v1/tasks with a new Idempotency-Key and title on every request. */
  createTasks?: { token: string; projectId: string };
  /** Seconds of load before the measured run, in the same process and not counted. */
  warmupSeconds?: number;
  /**
   * Waits for a line on stdin before the warm-up and again before the measured run, announcing on
   * stdout that it waits (generatorSignals): generators loading several servers at once are started
   * together by their parent, so that their measured windows coincide whatever their start-up took.
   */
  stepped?: boolean;
}

export interface LoadResult {
  generator: 'wrk' | 'autocannon';
  requestsPerSecond: number;
  p50Ms: number;
  /** wrk's 95th percentile; autocannon reports none, so its 97.5th (an upper bound). */
  p95Ms: number;
  p99Ms: number;
  meanMs: number;
  non2xx: number;
  /** Answers of 300 and above by status, for the writing scenario under wrk (a response hook slows wrk down, so reads go without). */
  statuses?: Record<string, number>;
  errors: number;
  /** Epoch milliseconds when the measured run started and ended. */
  startedAt: number;
  endedAt: number;
}

/**
 * What every Idempotency-Key of one run starts with: new for each run, so that the measured run
 * never replays a key of the warm-up run in the same process (a replay answers from the stored
 * response and would flatter the write path).
 */
const keyPrefixOfRun = () => `bench-${process.pid}-${randomBytes(6).toString('hex')}`;

function wrkInstalled(): boolean {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
    return true;
  } catch (error) {
    // wrk --version exits 1 after printing its version.
    return (error as { status?: number }).status === 1;
  }
}

/** wrk with its latency distribution; POSTs come from a Lua script that numbers each request. */
async function runWrk(scenario: LoadScenario): Promise<LoadResult> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-wrk-'));
  try {
    const script = path.join(dir, 'scenario.lua');
    const headers = { ...scenario.headers };
    const lines = Object.entries(headers).map(([name, value]) => `wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`);
    if (scenario.createTasks) {
      const { token, projectId } = scenario.createTasks;
      lines.push(
        'local count = 0',
        `wrk.method = "POST"`,
        `wrk.headers["authorization"] = ${JSON.stringify(`Bearer ${token}`)}`,
        'wrk.headers["content-type"] = "application/json"',
        'request = function()',
        '  count = count + 1',
        `  wrk.headers["idempotency-key"] = "${keyPrefixOfRun()}-" .. count`,
        `  return wrk.format(nil, nil, nil, '{"projectId":"${projectId}","title":"Bench task ' .. count .. '"}')`,
        'end',
        'local threads = {}',
        'setup = function(thread) table.insert(threads, thread) end',
        'statuses = {}',
        'response = function(status)',
        '  if status >= 300 then statuses[status] = (statuses[status] or 0) + 1 end',
        'end',
        'report_statuses = function()',
        '  for _, thread in ipairs(threads) do',
        '    for status, count in pairs(thread:get("statuses")) do io.write(string.format("STATUS %d %d\\n", status, count)) end',
        '  end',
        'end',
      );
    }
    lines.push(
      'done = function(summary, latency, requests)',
      '  if report_statuses then report_statuses() end',
      '  local non2xx = summary.errors.status',
      '  io.write(string.format("RESULT %d %d %d %f %f %f %f %f\\n", summary.requests, non2xx, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, summary.duration, latency:percentile(50), latency:percentile(99), latency.mean, latency:percentile(95)))',
      'end',
    );
    writeFileSync(script, lines.join('\n'));
    const output = await new Promise<string>((resolve, reject) =>
      execFile('wrk', ['-t1', `-c${scenario.connections}`, `-d${scenario.seconds}s`, '-s', script, scenario.url], (error, stdout, stderr) =>
        error ? reject(new Error(stderr || error.message)) : resolve(stdout),
      ),
    );
    const fields = /RESULT (\d+) (\d+) (\d+) ([\d.]+) ([\d.]+) ([\d.]+) ([\d.]+) ([\d.]+)/.exec(output);
    if (!fields) throw new Error(`wrk printed no result:\n${output}`);
    const [requests, non2xx, errors, durationUs, p50Us, p99Us, meanUs, p95Us] = fields.slice(1).map(Number) as number[];
    const statuses = Object.fromEntries([...output.matchAll(/STATUS (\d+) (\d+)/g)].map(([, status, count]) => [status!, Number(count)]));
    return {
      generator: 'wrk',
      startedAt: 0,
      endedAt: 0,
      requestsPerSecond: Math.round(requests! / (durationUs! / 1e6)),
      p50Ms: Math.round(p50Us! / 10) / 100,
      p95Ms: Math.round(p95Us! / 10) / 100,
      p99Ms: Math.round(p99Us! / 10) / 100,
      meanMs: Math.round(meanUs! / 10) / 100,
      non2xx: non2xx!,
      ...(scenario.createTasks ? { statuses } : {}),
      errors: errors!,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const scenario = JSON.parse(process.argv[2] ?? '') as LoadScenario;
  const run = wrkInstalled() ? runWrk : runAutocannon;
  const goAheads = scenario.stepped ? createInterface({ input: process.stdin }) : undefined;
  const stdin = goAheads?.[Symbol.asyncIterator]();
  const waitForGo = async (signal: string) => {
    if (!stdin) return;
    process.stdout.write(`${signal}\n`);
    if ((await stdin.next()).done) throw new Error('stdin closed before the go-ahead');
  };
  await waitForGo(generatorSignals.ready);
  if (scenario.warmupSeconds) await run({ ...scenario, seconds: scenario.warmupSeconds });
  await waitForGo(generatorSignals.warmedUp);
  const startedAt = Date.now();
  const result = await run(scenario);
  process.stdout.write(`${JSON.stringify({ ...result, startedAt, endedAt: Date.now() })}\n`);
  goAheads?.close();
}

async function runAutocannon(scenario: LoadScenario): Promise<LoadResult> {
  let count = 0;
  const keyPrefix = keyPrefixOfRun();
  const create = scenario.createTasks;
  const result = await autocannon({
    url: scenario.url,
    connections: scenario.connections,
    duration: scenario.seconds,
    headers: scenario.headers ?? {},
    ...(create
      ? {
          requests: [
            {
              setupRequest: (request: autocannon.Request) => ({
                ...request,
                method: 'POST' as const,
                headers: {
                  authorization: `Bearer ${create.token}`,
                  'content-type': 'application/json',
                  'idempotency-key': `${keyPrefix}-${++count}`,
                },
                body: JSON.stringify({ projectId: create.projectId, title: `Bench task ${count}` }),
              }),
            },
          ],
        }
      : {}),
  });
  return {
    generator: 'autocannon',
    startedAt: 0,
    endedAt: 0,
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p95Ms: result.latency.p97_5,
    p99Ms: result.latency.p99,
    meanMs: Math.round(result.latency.mean * 100) / 100,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

main().catch((error: unknown) => {
  process.stderr.write(`load generator failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
