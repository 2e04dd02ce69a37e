import { schedule, type ScheduledTask } from 'node-cron';
import type { Logger } from './logger.js';

export interface Housekeeping {
  name: string;
  /** A cron expression (node-cron, with seconds optional). */
  every: string;
  run: () => number;
}

/**
 * Periodic clean-up of state kept in the database. Each job is idempotent and safe to run in
 * several processes at once, so every server process may schedule it.
 */
export function startScheduledJobs(jobs: Housekeeping[], logger: Logger): { stop(): Promise<void> } {
  const tasks: ScheduledTask[] = jobs.map((job) =>
    schedule(
      job.every,
      () => {
        try {
          const removed = job.run();
          if (removed > 0) logger.info('housekeeping', { job: job.name, removed });
        } catch (error) {
          logger.error('housekeeping failed', { job: job.name, error });
        }
      },
      { name: job.name, noOverlap: true },
    ),
  );
  return {
    async stop() {
      await Promise.all(tasks.map((task) => task.destroy()));
    },
  };
}
