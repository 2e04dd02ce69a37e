import { schedule, type ScheduledTask } from 'node-cron';
import type { Logger } from './logger.js';
import type { ContractStore } from './store/contracts.js';
import { WEBHOOK_LOG_RETENTION_MS, type WebhookDeliveryStore } from './store/webhookDeliveries.js';

export interface Housekeeping {
  name: string;
  /** A cron expression (node-cron, with seconds optional). */
  every: string;
  /** Answers how many rows it changed or removed. */
  run: () => number | Promise<number>;
}

/**
 * Periodic clean-up of state kept in the database. Each job is idempotent and safe to run in
 * several processes at once, so every server process may schedule it.
 */
export function startScheduledJobs(jobs: Housekeeping[], logger: Logger): { stop(): Promise<void> } {
  /** Runs under way: node-cron's destroy() does not wait for them, and the store must outlive them. */
  const running = new Set<Promise<void>>();
  const tasks: ScheduledTask[] = jobs.map((job) =>
    schedule(
      job.every,
      () => {
        const run = (async () => {
          try {
            const removed = await job.run();
            if (removed > 0) logger.info('housekeeping', { job: job.name, removed });
          } catch (error) {
            logger.error('housekeeping failed', { job: job.name, error });
          }
        })();
        running.add(run);
        return run.finally(() => running.delete(run));
      },
      { name: job.name, noOverlap: true },
    ),
  );
  return {
    /** Schedules no more runs and resolves once the runs under way have ended. */
    async stop() {
      await Promise.all(tasks.map((task) => task.destroy()));
      await Promise.all(running);
    },
  };
}

/**
 * The webhook jobs, for every process that runs a worker or a server: forget previous secrets
 * whose overlap has ended (attempts already stop using them at the expiry), and purge delivery
 * logs 30 days after they end and events 30 days after they occur.
 */
export function webhookHousekeeping(store: WebhookDeliveryStore, now: () => number): Housekeeping[] {
  return [
    { name: 'end-webhook-rotation-overlaps', every: '* * * * *', run: () => store.endExpiredRotationOverlaps() },
    { name: 'purge-webhook-deliveries', every: '23 * * * *', run: () => store.purgeEndedDeliveries(now() - WEBHOOK_LOG_RETENTION_MS) },
    { name: 'purge-outbox-events', every: '29 * * * *', run: () => store.purgeEvents(now() - WEBHOOK_LOG_RETENTION_MS) },
  ];
}

/**
 * The contract job, for every server process: record the expiry of sent contracts past their date
 * (contract.expired each). Reads already show them expired; this writes what they show.
 */
export function contractHousekeeping(store: Pick<ContractStore, 'expireOverdueContracts'>): Housekeeping[] {
  return [{ name: 'expire-overdue-contracts', every: '* * * * *', run: () => store.expireOverdueContracts() }];
}
