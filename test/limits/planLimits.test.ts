import { describe, expect, it } from 'vitest';
import { readPlanLimitTable, PlanTableError } from '../../src/store/planLimits.js';
import { loadContractDocument } from '../support/contractClient.js';

const document = loadContractDocument('work-platform');

describe('readPlanLimitTable', () => {
  it("reads the seed's plan table from the Work-Platform contract", () => {
    const table = readPlanLimitTable(document);
    expect(table.windowMs).toBe(60_000);
    expect(table.requestsPerMinute.read).toEqual({ free: 300, pro: 1200, team: 1200, business: 1200, enterprise: 6000 });
    expect(table.requestsPerMinute.write).toEqual({ free: 60, pro: 300, team: 300, business: 300, enterprise: 1500 });
    expect(table.requestsPerMinute.ai).toEqual({ free: 20, pro: 60, team: 60, business: 60, enterprise: 300 });
    expect(table.tiers).toEqual({ free: 'free', pro: 'pro', team: 'pro', business: 'pro', enterprise: 'enterprise' });
    expect(table.monthlyQuota.enterprise).toBeNull();
    expect(table.webhookRetryDelaysSeconds).toEqual([30, 120, 600, 1800, 7200, 28800, 86400]);
  });

  it('names what is wrong in a malformed table', () => {
    const broken = structuredClone(document) as Record<string, any>;
    delete broken['x-rate-limits'].requestsPerMinute.write.team;
    expect(() => readPlanLimitTable(broken)).toThrow(new PlanTableError('x-rate-limits.requestsPerMinute.write.team is missing or not valid'));
    expect(() => readPlanLimitTable({})).toThrow(PlanTableError);
  });
});
