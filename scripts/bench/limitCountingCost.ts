// npx tsx scripts/bench/limitCountingCost.ts <redis url>: what one counted call costs
// in this process, for the decision in src/limits/redisLimitCounters.ts (no counting in the
// process alone with Redis). SQLite with and without counting alone, then Redis one call at a
// time and 10 in flight (10 connections of the HTTP bench). Far from the limit, one bucket.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SqliteRateLimiter } from '../../src/limits/rateLimiter.js';
import { openRedisConnection } from '../../src/limits/redisConnection.js';
import { RedisLimitCounters } from '../../src/limits/redisLimitCounters.js';
import { createJsonLogger } from '../../src/logger.js';
import { openDatabase } from '../../src/store/database.js';
import { printHelpWhenAsked } from './helpWhenAsked.js';

printHelpWhenAsked(import.meta.filename);

const CALLS = 20_000;
const LIMIT = 1_000_000_000;
const WINDOW = 60_000;
const url = process.argv[2] ?? 'redis://127.0.0.1:6379';

async function measure(name: string, run: () => Promise<void> | void): Promise<void> {
  await run(); // warm-up
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await run();
  const elapsed = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  // CPU of this process per call: what the count takes from a server process (Redis's own CPU is elsewhere).
  const cpuPerCall = (cpu.user + cpu.system) / CALLS;
  process.stdout.write(
    `${name.padEnd(52)} ${((elapsed * 1000) / CALLS).toFixed(1).padStart(7)} µs/call (wall)  ${cpuPerCall.toFixed(1).padStart(6)} µs/call (this process's CPU)  ${Math.round(CALLS / (elapsed / 1000)).toLocaleString('en').padStart(9)} calls/s\n`,
  );
}

const dir = mkdtempSync(path.join(tmpdir(), 'limit-cost-'));
try {
  const db = openDatabase(path.join(dir, 'app.db'));
  const sqlite = new SqliteRateLimiter(db, Date.now);
  const consume = () => sqlite.countTogether(() => sqlite.consume('b', LIMIT, WINDOW), () => sqlite.estimate('b', LIMIT, WINDOW));
  await measure('SQLite, counting alone far from the limit (today)', () => {
    for (let i = 0; i < CALLS; i++) sqlite.countLocally('b', LIMIT, WINDOW) ?? consume();
  });
  await measure('SQLite, every call a write transaction', () => {
    for (let i = 0; i < CALLS; i++) consume();
  });
  db.close();

  const connection = await openRedisConnection({ url, keyPrefix: `cost-${Date.now()}:`, connectTimeoutMs: 1000, commandTimeoutMs: 1000 }, createJsonLogger());
  const redis = new RedisLimitCounters(connection, { keyPrefix: `cost-${Date.now()}:`, now: Date.now });
  const call = { owner: 'wrk_1', bucket: 'wp:wrk_1:read', limit: LIMIT, windowMs: WINDOW, quota: { workspaceId: 'wrk_1', limit: LIMIT } };
  await measure('Redis, one call at a time (bucket + quota script)', async () => {
    for (let i = 0; i < CALLS; i++) await redis.countCall(call);
  });
  await measure('Redis, 10 calls in flight (bucket + quota script)', async () => {
    await Promise.all(Array.from({ length: 10 }, async () => {
      for (let i = 0; i < CALLS / 10; i++) await redis.countCall(call);
    }));
  });
  await connection.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
