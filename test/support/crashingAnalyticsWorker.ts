// An analytics thread that ends itself (as a crash would) when asked about the project
// `prj_crashNow`, and otherwise answers as the real one (src/expensiveCalls/analyticsWorker.ts) does.
import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';
import { createAnalyticsStore } from '../../src/store/analytics.js';
import type { AnalyticsRequest, AnalyticsWorkerData } from '../../src/expensiveCalls/analyticsWorker.js';

const store = createAnalyticsStore(new BetterSqlite3((workerData as AnalyticsWorkerData).databasePath, { readonly: true }));
parentPort!.on('message', (request: AnalyticsRequest) => {
  if (request.method === 'hasProject' && request.args[1] === 'prj_crashNow') process.exit(7);
  void (store[request.method] as (...args: unknown[]) => Promise<unknown>)(...request.args).then((value) => parentPort!.postMessage({ id: request.id, value }));
});
