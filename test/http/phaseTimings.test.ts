import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pipelinePhases, type OperationBudget } from '../../src/contract/phaseTimings.js';
import { startTestApp } from '../support/testApp.js';

/** PHASE_TIMINGS_FILE: what the bench's per-request budget table reads. */
const outDir = mkdtempSync(path.join(tmpdir(), 'phase-timings-'));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

describe('PHASE_TIMINGS_FILE', () => {
  it('writes, when the server closes, each operation called with its calls and microseconds per step', async () => {
    const file = path.join(outDir, 'phases.json');
    const t = await startTestApp({ config: { phaseTimingsFile: file } });
    try {
      const auth = { authorization: `Bearer ${t.fixture.workPlatform.tokens.all}` };
      for (let call = 0; call < 3; call += 1) expect((await t.workPlatformClient.get('/v1/tasks?limit=5', auth)).status).toBe(200);
      expect((await t.client.get('/api/v1/portfolio', { authorization: `Bearer ${t.fixture.portfolio.apiKey}` })).status).toBe(200);
      // A refusal before routing is no operation's call.
      expect((await t.workPlatformClient.get('/v1/no-such-thing', auth)).status).toBe(404);
    } finally {
      await t.close();
    }
    const budgets = JSON.parse(readFileSync(file, 'utf8')) as OperationBudget[];
    expect(budgets.map(({ operationId, calls }) => [operationId, calls]).sort()).toEqual([
      ['getPortfolio', 1],
      ['listTasks', 3],
    ]);
    for (const { microsecondsPerCall } of budgets) {
      const steps = pipelinePhases.map((phase) => microsecondsPerCall[phase]);
      expect(steps.every((value) => value >= 0)).toBe(true);
      expect(microsecondsPerCall.handler).toBeGreaterThan(0);
      // The steps and the rest make up the whole, give or take the rounding of each to 0.1 µs.
      expect(Math.abs(steps.reduce((sum, value) => sum + value, 0) + microsecondsPerCall.other - microsecondsPerCall.total)).toBeLessThan(1);
    }
  });
});
