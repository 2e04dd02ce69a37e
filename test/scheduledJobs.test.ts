import { describe, expect, it } from 'vitest';
import { createJsonLogger } from '../src/logger.js';
import { startScheduledJobs } from '../src/scheduledJobs.js';

describe('startScheduledJobs', () => {
  it('stop() resolves only once a run under way has ended, so the store it uses can close after it', async () => {
    const lines: string[] = [];
    const logger = createJsonLogger({ out: (line) => lines.push(line), err: (line) => lines.push(line) });
    let started!: () => void;
    const runStarted = new Promise<void>((resolve) => (started = resolve));
    let finish!: (removed: number) => void;
    const jobs = startScheduledJobs(
      [
        {
          name: 'slow-sweep',
          every: '* * * * * *',
          run: () => {
            started();
            return new Promise<number>((resolve) => (finish = resolve));
          },
        },
      ],
      logger,
    );
    await runStarted;
    let stopped = false;
    const stopping = jobs.stop().then(() => (stopped = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false);
    finish(3);
    await stopping;
    expect(stopped).toBe(true);
    expect(lines.some((line) => line.includes('"job":"slow-sweep"') && line.includes('"removed":3'))).toBe(true);
  });
});
