import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { workPlatformPlanTable } from '../../src/limits/planLimits.js';
import { SqliteRateLimiter } from '../../src/limits/rateLimiter.js';
import { createQuotaCounterStore, type QuotaCounterStore } from '../../src/store/quotaCounters.js';
import { createWorkspaceStore, type Workspace } from '../../src/store/workspaces.js';
import type { Caller } from '../../src/auth/bearerTokens.js';
import { enforceCallLimits, type QuotaCounter } from '../../src/workPlatform/callLimits.js';
import { ApiProblem } from '../../src/workPlatform/problems.js';
import { makeDatabase, type TempDatabase } from '../store/factories.js';
import { makeWorkspace } from '../store/workPlatformFactories.js';

const now = Date.UTC(2030, 0, 15, 12, 0, 10);
let t: TempDatabase;
let workspace: Workspace;
let caller: Caller;
let rateLimiter: SqliteRateLimiter;
let quotaStore: QuotaCounterStore;
beforeEach(() => {
  t = makeDatabase();
  const fixture = makeWorkspace(t.db, { plan: 'free' });
  workspace = createWorkspaceStore(t.db).getWorkspace(fixture.workspaceId)!;
  caller = { kind: 'pat', workspaceId: workspace.id, userId: fixture.ownerId, role: 'owner', scopes: [], workspace, actor: { id: fixture.ownerId, kind: 'USER' } };
  rateLimiter = new SqliteRateLimiter(t.db, () => now);
  quotaStore = createQuotaCounterStore(t.db);
});
afterEach(() => t.cleanup());

const enforce = (quota: QuotaCounter, who: Caller = caller) =>
  enforceCallLimits({ table: workPlatformPlanTable(), rateLimiter, quota, now }, who, 'read');
const rateCount = () => t.db.prepare('SELECT sum(count) FROM rate_limit_counters').pluck().get();
const quotaCount = () => quotaStore.quotaUsage(workspace.id, now).used;

describe('enforceCallLimits: one write transaction per call', () => {
  it('counts the rate limit and the quota inside one transaction that is committed when it returns', () => {
    const seenInTransaction: boolean[] = [];
    const quota: QuotaCounter = {
      countQuotaCall(...args) {
        seenInTransaction.push(t.db.inTransaction);
        return quotaStore.countQuotaCall(...args);
      },
    };
    const { headers, refusal } = enforce(quota);
    expect(refusal).toBeUndefined();
    expect(seenInTransaction).toEqual([true]);
    expect(t.db.inTransaction).toBe(false);
    expect(rateCount()).toBe(1);
    expect(quotaCount()).toBe(1);
    expect(headers['x-ratelimit-remaining']).toBe(String(workPlatformPlanTable().requestsPerMinute.read.free - 1));
    expect(headers['x-quota-remaining']).toBe(String(workPlatformPlanTable().monthlyQuota.free! - 1));
  });

  it('commits both counts or neither: a failing quota count takes the rate-limit count back', () => {
    const failing: QuotaCounter = {
      countQuotaCall(...args) {
        quotaStore.countQuotaCall(...args);
        throw new Error('the quota store failed');
      },
    };
    expect(() => enforce(failing)).toThrow('the quota store failed');
    expect(rateCount()).toBeNull();
    expect(quotaCount()).toBe(0);
  });

  it('commits the counts of a refused call and returns the 429 with them, leaving the quota alone', () => {
    const limit = workPlatformPlanTable().requestsPerMinute.read.free;
    for (let call = 0; call < limit; call += 1) expect(enforce(quotaStore).refusal).toBeUndefined();
    const { refusal } = enforce(quotaStore);
    expect(refusal).toBeInstanceOf(ApiProblem);
    expect((refusal as ApiProblem).headers).toMatchObject({ 'x-ratelimit-remaining': '0', 'retry-after': '50' });
    expect(t.db.inTransaction).toBe(false);
    expect(rateCount()).toBe(limit + 1);
    expect(quotaCount()).toBe(limit);
  });

  it('never counts a session call against the quota', () => {
    enforce(quotaStore, { ...caller, kind: 'session' });
    expect(rateCount()).toBe(1);
    expect(quotaCount()).toBe(0);
  });
});
