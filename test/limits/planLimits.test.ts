import { describe, expect, it } from 'vitest';
import { plans, rateLimitClasses, rateLimitTiers } from '../../generated/work-platform/rules.js';
import { rateLimitNamesOf } from '../../scripts/contract/contractRules.js';
import type { JsonObject } from '../../scripts/contract/document.js';
import { readPlanLimitTable, PlanTableError } from '../../src/limits/planLimits.js';
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

describe('plans, rate-limit classes and tiers', () => {
  it('are generated from x-rate-limits: the keys of tiers, the keys of requestsPerMinute and the tiers in order of first mention', () => {
    expect(rateLimitNamesOf(document['x-rate-limits'] as JsonObject)).toEqual({
      plans: [...plans],
      rateLimitClasses: [...rateLimitClasses],
      rateLimitTiers: [...rateLimitTiers],
    });
    expect(plans).toEqual(['free', 'pro', 'team', 'business', 'enterprise']);
    expect(rateLimitClasses).toEqual(['read', 'write', 'ai']);
    expect(rateLimitTiers).toEqual(['free', 'pro', 'enterprise']);
    const grown = structuredClone(document['x-rate-limits']) as Record<string, any>;
    grown.tiers.starter = 'starter';
    grown.requestsPerMinute.export = { free: 1 };
    expect(rateLimitNamesOf(grown)).toEqual({
      plans: [...plans, 'starter'],
      rateLimitClasses: [...rateLimitClasses, 'export'],
      rateLimitTiers: [...rateLimitTiers, 'starter'],
    });
  });

  it('agree with the enums the contract states for clients (problem member, limits resource, headers)', () => {
    const schemas = (document.components as any).schemas;
    const headers = (document.components as any).headers;
    expect(schemas.RateLimitProblemMember.properties.class.enum).toEqual([...rateLimitClasses]);
    expect(schemas.RateLimitProblemMember.properties.tier.enum).toEqual([...rateLimitTiers]);
    expect(schemas.WorkspaceLimits.properties.plan.enum).toEqual([...plans]);
    expect(schemas.WorkspaceLimits.properties.tier.enum).toEqual([...rateLimitTiers]);
    expect(headers['X-RateLimit-Class'].schema.enum).toEqual([...rateLimitClasses]);
    expect(headers['X-RateLimit-Tier'].schema.enum).toEqual([...rateLimitTiers]);
  });
});
