import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { workPlatformPlanTable } from '../../src/limits/planLimits.js';
import { LocalQuotaCounts } from '../../src/limits/localQuotaCounts.js';
import { SqliteRateLimiter } from '../../src/limits/rateLimiter.js';
import { createQuotaCounterStore, type QuotaCounterStore } from '../../src/store/quotaCounters.js';
import { createWorkspaceStore, type Workspace } from '../../src/store/workspaces.js';
import type { Caller } from '../../src/auth/bearerTokens.js';
import { enforceCallLimits, type QuotaCounter } from '../../src/workPlatform/callLimits.js';
import { ApiProblem } from '../../src/workPlatform/problems.js';
import { makeDatabase, type TempDatabase } from '../store/factories.js';
import { makeWorkspace } from '../store/workPlatformFactories.js';
import { bearer, startTestApp } from '../support/testApp.js';
import { liftCallLimits } from '../support/workPlatform.js';

const now = Date.UTC(2030, 0, 15, 12, 0, 10);
let t: TempDatabase;
let workspace: Workspace;
let caller: Caller;
let rateLimiter: SqliteRateLimiter;
let quotaStore: QuotaCounterStore;
let localQuota: LocalQuotaCounts;
beforeEach(async () => {
  t = makeDatabase();
  const fixture = await makeWorkspace(t.db, { plan: 'free' });
  workspace = (await createWorkspaceStore(t.db).getWorkspace(fixture.workspaceId))!;
  caller = { kind: 'pat', workspaceId: workspace.id, userId: fixture.ownerId, role: 'owner', scopes: [], workspace, actor: { id: fixture.ownerId, kind: 'USER' } };
  rateLimiter = new SqliteRateLimiter(t.db, () => now);
  quotaStore = createQuotaCounterStore(t.db);
  localQuota = new LocalQuotaCounts();
});
afterEach(() => t.cleanup());

const enforce = (quota: QuotaCounter, who: Caller = caller) =>
  enforceCallLimits({ table: workPlatformPlanTable(), rateLimiter, quota, localQuota, now }, who, 'read');
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

describe('enforceCallLimits: quota calls counted in the process while far from the quota', () => {
  const withQuota = async (monthlyQuota: number) => {
    await createWorkspaceStore(t.db).setWorkspaceLimits(workspace.id, { monthlyQuota, readPerMinute: 1_000_000 });
    workspace = (await createWorkspaceStore(t.db).getWorkspace(workspace.id))!;
    caller = { ...caller, workspace };
  };
  /** A second server process on the same database: its own limiter and local counts. */
  const otherProcess = () => {
    const limiter = new SqliteRateLimiter(t.db, () => now);
    const counts = new LocalQuotaCounts();
    return (who: Caller = caller) => enforceCallLimits({ table: workPlatformPlanTable(), rateLimiter: limiter, quota: quotaStore, localQuota: counts, now }, who, 'read');
  };

  it('writes most calls with a later one, and the rest when asked: the shared count ends exact', async () => {
    await withQuota(100_000);
    for (let call = 0; call < 50; call += 1) expect(enforce(quotaStore).refusal).toBeUndefined();
    const written = quotaCount();
    expect(written).toBeLessThan(50);
    expect(localQuota.unwrittenFor(workspace.id, now)).toBe(50 - written);
    const pending = localQuota.unwritten(now);
    for (const { workspaceId, period, calls } of pending) quotaStore.addQuotaCalls(workspaceId, period, calls);
    localQuota.flushed(pending, now);
    expect(quotaCount()).toBe(50);
    expect(localQuota.unwrittenFor(workspace.id, now)).toBe(0);
  });

  it('forgets counts of months that ended once they hold nothing unwritten, so a new month can be counted locally', async () => {
    await withQuota(100_000);
    for (let call = 0; call < 3; call += 1) enforce(quotaStore);
    const pending = localQuota.unwritten(now);
    for (const { workspaceId, period, calls } of pending) quotaStore.addQuotaCalls(workspaceId, period, calls);
    localQuota.flushed(pending, now);
    const nextMonth = Date.UTC(2030, 1, 1, 0, 0, 1);
    expect(localQuota.unwritten(nextMonth)).toEqual([]);
    expect((localQuota as unknown as { known: Map<string, unknown> }).known.size).toBe(0);
  });

  it('reports the calls counted in the process in its headers', async () => {
    await withQuota(100_000);
    let remaining = '';
    for (let call = 0; call < 20; call += 1) remaining = enforce(quotaStore).headers['x-quota-remaining']!;
    expect(remaining).toBe(String(100_000 - 20));
  });

  it('near the quota counts every call in the database: two processes together admit exactly the quota', async () => {
    await withQuota(40);
    const other = otherProcess();
    let admitted = 0;
    for (let call = 0; call < 60; call += 1) {
      const { refusal } = call % 2 === 0 ? enforce(quotaStore) : other();
      if (refusal === undefined) admitted += 1;
      else expect((refusal as ApiProblem).slug).toBe('quota-exceeded');
    }
    expect(admitted).toBe(40);
    expect(quotaCount()).toBe(40);
  });
});

describe('quota calls counted in the process, over HTTP', () => {
  it('are all in the shared count once the server has shut down', async () => {
    const app = await startTestApp();
    try {
      const { workspaceId, tokens } = app.fixture.workPlatform;
      await liftCallLimits(app.db, workspaceId);
      const quotaUsed = () => createQuotaCounterStore(app.db).quotaUsage(workspaceId, Date.now()).used;
      const before = quotaUsed();
      for (let call = 0; call < 30; call += 1) {
        expect((await app.workPlatformClient.get('/v1/tasks?limit=1', bearer(tokens.all))).status).toBe(200);
      }
      await app.app.close();
      expect(quotaUsed() - before).toBe(30);
    } finally {
      await app.close();
    }
  });
});
