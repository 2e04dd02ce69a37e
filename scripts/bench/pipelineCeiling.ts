// npx tsx scripts/bench/pipelineCeiling.ts: how much a pipeline may cost per request for GET
// /api/v1/portfolio to reach a given fraction of bare node:http, measured rather than assumed. Bare
// node:http answers the portfolio's bytes after spinning the CPU for W µs a request (W from
// CEILING_WORK_US, default 0,15,30,45,60,90), each in a process of its own, beside the server as
// `npm start` runs it; wrk loads each in turn in alternating rounds (CEILING_ROUNDS, default 3, of
// CEILING_SECONDS, default 3). Prints each one's median req/s, its ratio to W = 0 (the bench's
// reference) and its CPU per request (from /proc), then the work at which the ratio crosses 0.5,
// interpolated. Node's own share of a request (parse, the write) is what W = 0 costs.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startApiServer } from './apiServerProcess.js';
import { startReferenceServer } from './benchProcess.js';
import { runLoadGenerator } from './loadGeneratorProcess.js';
import { median } from './median.js';
import { cpuMilliseconds } from './processFigures.js';
import { seedBenchDatabase } from './seed.js';
import { printHelpWhenAsked } from './helpWhenAsked.js';

printHelpWhenAsked(import.meta.filename);

const works = (process.env.CEILING_WORK_US ?? '0,15,30,45,60,90').split(',').map(Number);
if (works[0] !== 0 || works.some((work) => !Number.isSafeInteger(work) || work < 0)) throw new Error('CEILING_WORK_US: whole microseconds, starting with 0 (the reference)');
const ROUNDS = Number(process.env.CEILING_ROUNDS ?? 3);
const SECONDS = Number(process.env.CEILING_SECONDS ?? 3);
const TARGET = 0.5;

interface Subject {
  name: string;
  url: string;
  headers: Record<string, string>;
  process: { stop(): Promise<void>; pid: number };
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'pipeline-ceiling-'));
const subjects: Subject[] = [];
try {
  const databasePath = path.join(dir, 'app.db');
  const bench = await seedBenchDatabase(databasePath, [1000]);
  const server = await startApiServer({ environment: { DATABASE_PATH: databasePath } });
  const headers = { authorization: `Bearer ${bench.portfolioKey}` };
  const bodyFile = path.join(dir, 'portfolio.json');
  writeFileSync(bodyFile, Buffer.from(await (await fetch(`${server.url}/api/v1/portfolio`, { headers })).arrayBuffer()));
  subjects.push({ name: 'GET /api/v1/portfolio (the server)', url: `${server.url}/api/v1/portfolio`, headers, process: { stop: server.stop, pid: server.child.pid! } });
  for (const work of works) {
    const reference = await startReferenceServer(work === 0 ? ['http', bodyFile] : ['http-work', bodyFile, String(work)]);
    subjects.push({ name: `bare node:http + ${work} µs of work`, url: `${reference.ready[1]}/api/v1/portfolio`, headers: {}, process: { stop: reference.stop, pid: reference.child.pid! } });
  }
  const rates = new Map<Subject, number[]>(subjects.map((subject) => [subject, []]));
  const cpu = new Map<Subject, number[]>(subjects.map((subject) => [subject, []]));
  const scenario = (subject: Subject, seconds: number) => ({ url: subject.url, headers: subject.headers, connections: 10, seconds });
  for (const subject of subjects) await runLoadGenerator(scenario(subject, 1), `${subject.name} (warm-up)`);
  for (let round = 0; round < ROUNDS; round += 1) {
    process.stderr.write(`round ${round + 1} of ${ROUNDS}...\n`);
    for (const subject of round % 2 === 0 ? subjects : [...subjects].reverse()) {
      const before = cpuMilliseconds(subject.process.pid);
      const result = await runLoadGenerator(scenario(subject, SECONDS), subject.name);
      if (result.non2xx > 0) throw new Error(`${subject.name}: ${result.non2xx} non-2xx answers`);
      rates.get(subject)!.push(result.requestsPerSecond);
      cpu.get(subject)!.push(((cpuMilliseconds(subject.process.pid) - before) * 1000) / (result.requestsPerSecond * ((result.endedAt - result.startedAt) / 1000)));
    }
  }
  const reference = median(rates.get(subjects[1]!)!);
  process.stdout.write(`\n${ROUNDS} alternating rounds of ${SECONDS} s, 10 connections, wrk in its own process; load average ${os.loadavg().map((load) => load.toFixed(1)).join(', ')}\n\n`);
  process.stdout.write('| Subject | req/s | × bare node:http | CPU µs/request |\n|---|---:|---:|---:|\n');
  for (const subject of subjects) {
    const rate = median(rates.get(subject)!);
    process.stdout.write(`| ${subject.name} | ${Math.round(rate)} | ${(rate / reference).toFixed(2)} | ${median(cpu.get(subject)!).toFixed(1)} |\n`);
  }
  const points = subjects.slice(1).map((subject, index) => ({ work: works[index]!, ratio: median(rates.get(subject)!) / reference }));
  const crossing = points.findIndex((point) => point.ratio < TARGET);
  if (crossing > 0) {
    const [above, below] = [points[crossing - 1]!, points[crossing]!];
    const work = above.work + ((above.ratio - TARGET) / (above.ratio - below.ratio)) * (below.work - above.work);
    process.stdout.write(`\n${TARGET} × bare node:http is reached with at most about ${work.toFixed(0)} µs of work a request beyond what node:http itself spends.\n`);
  } else {
    process.stdout.write(`\nNo measured work crossed ${TARGET} × bare node:http: widen CEILING_WORK_US.\n`);
  }
} finally {
  await Promise.all(subjects.map((subject) => subject.process.stop()));
  rmSync(dir, { recursive: true, force: true });
}
