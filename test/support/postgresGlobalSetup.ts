// vitest globalSetup: gives every test process of the run one rendezvous folder for what the run
// shares (the PostgreSQL server, see sharedPostgresServer in postgresServer.ts; the redis-server) and
// stops each, if a test started it, after the last file. It starts nothing itself: a run that needs
// none of them pays nothing.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { stopSharedPostgresServer } from './postgresServer.js';
import { stopSharedRedisServer } from './redisServer.js';

// Both projects of vitest.config.ts run this setup in the one main process: they share one folder.
const runState = globalThis as { postgresRendezvous?: { folder: string; users: number } };

export default function setup(project: TestProject): () => Promise<void> {
  runState.postgresRendezvous ??= { folder: mkdtempSync(path.join(tmpdir(), 'test-postgres-rendezvous-')), users: 0 };
  const rendezvous = runState.postgresRendezvous;
  rendezvous.users += 1;
  project.provide('postgresRendezvous', rendezvous.folder);
  return async () => {
    rendezvous.users -= 1;
    if (rendezvous.users === 0) {
      runState.postgresRendezvous = undefined;
      // The PostgreSQL stop whatever the Redis stop threw, and last, as it deletes the rendezvous folder.
      try {
        await stopSharedRedisServer(rendezvous.folder);
      } finally {
        await stopSharedPostgresServer(rendezvous.folder);
      }
    }
  };
}
