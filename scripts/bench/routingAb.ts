// npx tsx scripts/bench/routingAb.ts: the route step without HTTP, the pipeline's own routing against
// openapi-backend's handleRequest (PipelineOptions.routing), in one process on one database: GET
// /api/v1/portfolio through `handle()` of two portfolio APIs, in alternating rounds (A, B, B, A, …),
// as CPU microseconds per call. Credentials and revisions are kept in memory as the server keeps them,
// so the figures are the pipeline's, not SQLite's. A busy machine moves both arms alike far more than
// it moves HTTP rates (scripts/bench/readPathAb.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Document } from 'openapi-backend';
import { createContractApi } from '../../src/contract/pipeline.js';
import { loadServedArtifacts } from '../../src/contract/servedArtifacts.js';
import { loadDemoData } from '../../src/demo/demoData.js';
import { SqliteRateLimiter } from '../../src/limits/rateLimiter.js';
import { createJsonLogger } from '../../src/logger.js';
import { portfolioProfile } from '../../src/portfolio/portfolioProfile.js';
import { createApiKeyStore, type ApiKeyRecord } from '../../src/store/apiKeys.js';
import { createBoundedCache } from '../../src/store/boundedCache.js';
import { createCachedRows, listenForCachedRowChanges } from '../../src/store/cachedRows.js';
import { openDatabase } from '../../src/store/database.js';
import { engineOf } from '../../src/store/engine.js';
import { createPortfolioReader } from '../../src/store/portfolioContent.js';
import { median } from './median.js';
import { printHelpWhenAsked } from './helpWhenAsked.js';

printHelpWhenAsked(import.meta.filename);

const ROUNDS = Number(process.env.AB_ROUNDS ?? 8);
const CALLS = Number(process.env.AB_CALLS ?? 20_000);
const dir = mkdtempSync(path.join(tmpdir(), 'routing-ab-'));
try {
  const db = openDatabase(path.join(dir, 'app.db'));
  const fixture = await loadDemoData(db, Date.now);
  const engine = engineOf(db);
  const changes = await listenForCachedRowChanges(engine);
  const artifacts = loadServedArtifacts('portfolio', 'http://api.example.test');
  const keys = createApiKeyStore(engine);
  const apiFor = (routing: 'direct' | 'openapi-backend') => {
    const cachedKeys = createCachedRows<ApiKeyRecord>(changes, ['api_keys'], { now: Date.now, maxEntries: 100 });
    const revisions = createCachedRows<number>(changes, ['portfolios'], { now: Date.now, maxEntries: 100 });
    const profile = portfolioProfile({
      document: artifacts.document as Document,
      findApiKeyByHash: (hash) => cachedKeys.get(hash, () => keys.findApiKeyByHash(hash)),
      services: { downloads: artifacts, content: createPortfolioReader(engine, { cache: createBoundedCache({ maxBytes: 1024 * 1024 }), revisions }) },
      rateLimiter: new SqliteRateLimiter(db, Date.now),
      rateLimit: { requestsPerWindow: 1e12, windowSeconds: 60 },
      now: Date.now,
      logger: createJsonLogger({ out: () => undefined, err: () => undefined }),
    });
    return createContractApi(profile, { now: Date.now, routing });
  };
  const arms = [
    { name: 'direct', api: await apiFor('direct'), cpu: [] as number[] },
    { name: 'openapi-backend handleRequest', api: await apiFor('openapi-backend'), cpu: [] as number[] },
  ];
  const call = { method: 'GET', path: '/api/v1/portfolio', rawQuery: '', headers: { authorization: `Bearer ${fixture.portfolio.apiKey}` }, readBody: async () => undefined, requestId: 'req_routing_ab' };
  for (const arm of arms) for (let index = 0; index < CALLS; index += 1) await arm.api.handle(call); // warm-up
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const arm of round % 2 === 0 ? arms : [...arms].reverse()) {
      const before = process.cpuUsage();
      for (let index = 0; index < CALLS; index += 1) {
        const { reply } = await arm.api.handle(call);
        if (reply.status !== 200) throw new Error(`${arm.name}: ${reply.status}`);
      }
      const used = process.cpuUsage(before);
      arm.cpu.push((used.user + used.system) / CALLS);
    }
  }
  const reference = median(arms[1]!.cpu);
  process.stdout.write(`GET /api/v1/portfolio through handle(), ${ROUNDS} alternating rounds of ${CALLS} calls: CPU µs per call\n`);
  for (const arm of arms) {
    process.stdout.write(`  ${arm.name.padEnd(30)} median ${median(arm.cpu).toFixed(1).padStart(6)}  × ${(median(arm.cpu) / reference).toFixed(3)}   rounds: ${arm.cpu.map((value) => value.toFixed(1)).join(', ')}\n`);
  }
  db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
