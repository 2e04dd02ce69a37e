// The noisy neighbour (issue 25, item 1): does one tenant's heavy analytics slow another tenant's
// list? A server of its own (as npm start runs it, the pool at its defaults, every page built from
// SQLite: LIST_PAGE_CACHE_PAGES=0) on the bench database; the victim is GET /v1/tasks?limit=50 of
// the largest task workspace, measured idle and then while 4 other workspaces (each its own
// ~100,000 tasks) loop the widest analytics call: the overdue report by day over 364 days. The
// noisy workspaces' limits are lifted (seedAnalyticsWorkspace), so that isolation does not rest on
// refusing their work: their answers are counted by status. Every load generator is a process of
// its own (one per noisy workspace, each with its token, and one for the victim).
import type { ChildProcess } from 'node:child_process';
import { startApiServer } from './apiServerProcess.js';
import type { LoadResult } from './loadGenerator.js';
import { runLoadGenerator } from './loadGeneratorProcess.js';
import { rssMegabytes } from './processFigures.js';
import type { AnalyticsBenchWorkspace } from './seed.js';

export interface NoisyNeighbourFigures {
  victim: string;
  noisy: string;
  noisyWorkspaces: number;
  tasksPerNoisyWorkspace: number;
  victimConnections: number;
  idle: LoadResult;
  loaded: LoadResult;
  /** What the noisy loops got meanwhile, summed: requests per second, non-2xx (429s would mean refused work). */
  noisyRequestsPerSecond: number;
  noisyNon2xx: number;
  noisyP50Ms: number[];
  serverRssMbIdle: number;
  serverRssMbLoaded: number;
  serverRssMbAfter: number;
  p50Ratio: number;
}

/** The widest call: the slowest report (overdue), by day, over 364 days of the seeded span. */
const NOISY_QUERY = 'from=2025-02-03&to=2026-02-02&bucket=day';

export async function measureNoisyNeighbour(
  options: {
    databasePath: string;
    victim: { token: string; taskCount: number };
    noisy: AnalyticsBenchWorkspace[];
    /** Connections of the victim's generator (steady traffic, not a flood). */
    victimConnections: number;
    duration: number;
    warmup: number;
    environment?: Record<string, string>;
  },
  children: ChildProcess[],
  log: (line: string) => void,
): Promise<NoisyNeighbourFigures> {
  const server = await startApiServer({ environment: { DATABASE_PATH: options.databasePath, LIST_PAGE_CACHE_PAGES: '0', ...options.environment }, name: 'the noisy-neighbour server' });
  children.push(server.child);
  try {
    const victimUrl = `${server.url}/v1/tasks?limit=50`;
    const victimHeaders = { authorization: `Bearer ${options.victim.token}` };
    const noisyUrl = `${server.url}/v1/analytics/tasks/overdue?${NOISY_QUERY}`;
    for (const workspace of options.noisy) {
      for (let attempt = 1; ; attempt += 1) {
        const response = await fetch(noisyUrl, { headers: { authorization: `Bearer ${workspace.token}` } });
        const body = (await response.json()) as { buckets?: unknown[] };
        // The analytics phase, just before, may have spent this minute's read bucket of its workspace (one of these): its
        // loops would only be refused, so the phase starts in the next window.
        const retryAfter = Number(response.headers.get('retry-after'));
        if (response.status === 429 && attempt === 1 && retryAfter > 0 && retryAfter <= 60) {
          log(`noisy neighbour: a noisy workspace's read bucket is spent for this minute; waiting ${retryAfter} s for the next...`);
          await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
          continue;
        }
        if (response.status !== 200 || body.buckets?.length !== 364) throw new Error(`GET ${noisyUrl} answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
        break;
      }
    }
    const victim = (seconds: number) => runLoadGenerator({ url: victimUrl, connections: options.victimConnections, seconds, headers: victimHeaders }, 'the victim');
    log(`noisy neighbour: idle GET /v1/tasks?limit=50 (${options.victimConnections} connection${options.victimConnections === 1 ? '' : 's'})...`);
    if (options.warmup > 0) await victim(options.warmup);
    const idle = await victim(options.duration);
    const serverRssMbIdle = rssMegabytes(server.child.pid!);

    log(`noisy neighbour: the same while ${options.noisy.length} workspaces loop GET /v1/analytics/tasks/overdue (${NOISY_QUERY})...`);
    // The noisy loops start first and outlast the victim's run on both sides.
    const noisySeconds = options.warmup + options.duration + 2;
    const noisy = options.noisy.map((workspace, index) =>
      runLoadGenerator({ url: noisyUrl, connections: 1, seconds: noisySeconds, headers: { authorization: `Bearer ${workspace.token}` } }, `noisy workspace ${index + 1}`),
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    if (options.warmup > 0) await victim(options.warmup);
    const loaded = await victim(options.duration);
    const serverRssMbLoaded = rssMegabytes(server.child.pid!);
    const noisyResults = await Promise.all(noisy);
    const serverRssMbAfter = rssMegabytes(server.child.pid!);
    return {
      victim: `GET /v1/tasks?limit=50 (${options.victim.taskCount.toLocaleString('en')} rows, LIST_PAGE_CACHE_PAGES=0)`,
      noisy: `GET /v1/analytics/tasks/overdue?${NOISY_QUERY}`,
      noisyWorkspaces: options.noisy.length,
      tasksPerNoisyWorkspace: options.noisy[0]?.taskCount ?? 0,
      victimConnections: options.victimConnections,
      idle,
      loaded,
      noisyRequestsPerSecond: noisyResults.reduce((sum, result) => sum + result.requestsPerSecond, 0),
      noisyNon2xx: noisyResults.reduce((sum, result) => sum + result.non2xx + result.errors, 0),
      noisyP50Ms: noisyResults.map((result) => result.p50Ms),
      serverRssMbIdle,
      serverRssMbLoaded,
      serverRssMbAfter,
      p50Ratio: idle.p50Ms > 0 ? loaded.p50Ms / idle.p50Ms : 0,
    };
  } finally {
    await server.stop();
  }
}

export function noisyNeighbourReport(figures: NoisyNeighbourFigures): string[] {
  const row = (label: string, result: LoadResult) => `| ${label} | ${result.requestsPerSecond} | ${result.p50Ms} | ${result.p95Ms} | ${result.p99Ms} | ${result.non2xx + result.errors} |`;
  return [
    `Noisy neighbour: ${figures.victim}, ${figures.victimConnections} connection(s), idle and while ${figures.noisyWorkspaces} workspaces of ${figures.tasksPerNoisyWorkspace.toLocaleString('en')} tasks loop ${figures.noisy} (one connection each, limits lifted):`,
    '',
    '| Victim | req/s | p50 ms | p95 ms | p99 ms | non-2xx |',
    '|---|---:|---:|---:|---:|---:|',
    row('idle', figures.idle),
    row('4 noisy workspaces', figures.loaded),
    '',
    `Noisy loops meanwhile: ${figures.noisyRequestsPerSecond} calls/s in all, p50 ${figures.noisyP50Ms.join(' / ')} ms, non-2xx ${figures.noisyNon2xx}. Server RSS: ${figures.serverRssMbIdle.toFixed(1)} MB idle, ${figures.serverRssMbLoaded.toFixed(1)} MB loaded, ${figures.serverRssMbAfter.toFixed(1)} MB after.`,
  ];
}
