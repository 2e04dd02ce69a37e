// What /readyz asks the database: whether it answers, whether it holds every migration of this
// build, and how long the oldest due webhook delivery has waited. Cheap by design: one read of
// drizzle's migrations table and one read of the due-deliveries index, at most about once a second
// (src/health/readiness.ts caches the answer).
import { and, eq, lte, min, sql } from 'drizzle-orm';
import { webhookDeliveries } from '../../db/schema.js';
import { projectFile } from '../projectFiles.js';
import type { StoreEngine } from './engine.js';
import { newestMigrationMillis } from './migrationJournal.js';

export interface DatabaseReadiness {
  /**
   * Whether the database holds every migration this build ships; throws when the database cannot
   * be read. A database migrated further by a newer build counts as current: refusing there would
   * take every instance of the older build out of rotation at once, in the middle of a rollout.
   */
  migrationsCurrent(): Promise<boolean>;
  /** When the oldest PENDING delivery that is due at `now` fell due (epoch ms), or null when none is due. */
  oldestDueDeliveryAt(now: number): Promise<number | null>;
}

export function createDatabaseReadiness(engine: StoreEngine): DatabaseReadiness {
  // drizzle's own table, outside the schema (and, on PostgreSQL, in its own schema `drizzle`): the
  // query builder cannot name it, so its one read is written out, as the migrators themselves do.
  const table = engine.kind === 'postgres' ? 'drizzle.__drizzle_migrations' : '__drizzle_migrations';
  const newestApplied = engine.statement({ toSQL: () => ({ sql: `SELECT max(created_at) FROM ${table}`, params: [] }) });
  // Read once: the journal is part of the build.
  const newestShipped = newestMigrationMillis(projectFile(engine.kind === 'postgres' ? 'db/postgres/migrations' : 'db/migrations'));
  const oldestDue = engine.statement<unknown, { now: number }>(
    engine.orm
      .select({ oldest: min(webhookDeliveries.nextAttemptAt) })
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.status, 'PENDING'), lte(webhookDeliveries.nextAttemptAt, sql.placeholder('now')))),
  );
  return {
    async migrationsCurrent() {
      const applied = await newestApplied.value({});
      return applied !== null && applied !== undefined && Number(applied) >= newestShipped;
    },
    async oldestDueDeliveryAt(now) {
      const oldest = await oldestDue.value({ now });
      return oldest === null || oldest === undefined ? null : Number(oldest);
    },
  };
}
