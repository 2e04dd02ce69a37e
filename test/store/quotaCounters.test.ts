import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';
import { createQuotaCounterStore, quotaPeriod, type QuotaCounterStore } from '../../src/store/quotaCounters.js';
import { makeDatabase, type TempDatabase } from './factories.js';
import { runScriptProcess, sourceUrl } from '../support/serverProcess.js';
import { makeWorkspace } from './workPlatformFactories.js';

let t: TempDatabase;
let workspaceId: string;
let store: QuotaCounterStore;
const now = Date.UTC(2026, 10, 23, 9, 41, 0);
const december = Date.UTC(2026, 11, 1);
beforeEach(async () => {
  t = makeDatabase();
  workspaceId = (await makeWorkspace(t.db)).workspaceId;
  store = createQuotaCounterStore(t.db);
});
afterEach(() => t.cleanup());

describe('quotaPeriod', () => {
  it('is the UTC calendar month, resetting at the first instant of the next one', () => {
    expect(quotaPeriod(now)).toEqual({ period: '2026-11', resetAt: december });
    expect(quotaPeriod(december - 1)).toEqual({ period: '2026-11', resetAt: december });
    expect(quotaPeriod(Date.UTC(2026, 11, 31, 23, 59, 59, 999))).toEqual({ period: '2026-12', resetAt: Date.UTC(2027, 0, 1) });
    expect(quotaPeriod(Date.UTC(2027, 1, 10))).toEqual({ period: '2027-02', resetAt: Date.UTC(2027, 2, 1) });
  });
});

describe('quota counter store', () => {
  it('counts calls up to the limit and refuses the next without counting it', () => {
    expect(store.countQuotaCall(workspaceId, now, 3)).toEqual({ allowed: true, used: 1, limit: 3, remaining: 2, period: '2026-11', resetAt: december });
    expect(store.countQuotaCall(workspaceId, now, 3)).toMatchObject({ allowed: true, used: 2, remaining: 1 });
    expect(store.countQuotaCall(workspaceId, now, 3)).toMatchObject({ allowed: true, used: 3, remaining: 0 });
    expect(store.countQuotaCall(workspaceId, now, 3)).toEqual({ allowed: false, used: 3, limit: 3, remaining: 0, period: '2026-11', resetAt: december });
    expect(store.quotaUsage(workspaceId, now)).toEqual({ period: '2026-11', used: 3, resetAt: december });
    // A raised limit (an override) lets calls through again at once.
    expect(store.countQuotaCall(workspaceId, now, 5)).toMatchObject({ allowed: true, used: 4, remaining: 1 });
  });

  it('counts without a cap when the limit is null, and refuses everything at 0', async () => {
    for (let call = 0; call < 5; call += 1) store.countQuotaCall(workspaceId, now, null);
    expect(store.countQuotaCall(workspaceId, now, null)).toEqual({ allowed: true, used: 6, limit: null, remaining: null, period: '2026-11', resetAt: december });
    const other = (await makeWorkspace(t.db, { name: 'Zero' })).workspaceId;
    expect(store.countQuotaCall(other, now, 0)).toMatchObject({ allowed: false, used: 0, limit: 0, remaining: 0 });
    expect(store.quotaUsage(other, now).used).toBe(0);
    expect(() => store.countQuotaCall(other, now, -1)).toThrow(RangeError);
  });

  it('restarts at the month boundary and keeps workspaces apart', async () => {
    const other = (await makeWorkspace(t.db, { name: 'Other' })).workspaceId;
    store.countQuotaCall(workspaceId, december - 1, 2);
    store.countQuotaCall(workspaceId, december - 1, 2);
    expect(store.countQuotaCall(workspaceId, december - 1, 2).allowed).toBe(false);
    expect(store.countQuotaCall(workspaceId, december, 2)).toMatchObject({ allowed: true, used: 1, period: '2026-12', resetAt: Date.UTC(2027, 0, 1) });
    expect(store.quotaUsage(other, december)).toEqual({ period: '2026-12', used: 0, resetAt: Date.UTC(2027, 0, 1) });
    expect(store.quotaUsage(workspaceId, december - 1).used).toBe(2);
    // A clock that moves back, or a year on, counts in the month it is in.
    expect(store.countQuotaCall(workspaceId, december - 1, 3)).toMatchObject({ allowed: true, used: 3, period: '2026-11', resetAt: december });
    expect(store.countQuotaCall(workspaceId, Date.UTC(2027, 10, 30), 3)).toMatchObject({ used: 1, period: '2027-11', resetAt: Date.UTC(2027, 11, 1) });
    expect(store.countQuotaCall(workspaceId, december, 3)).toMatchObject({ used: 2, period: '2026-12' });
  });

  it('shares one count between processes: never more than the limit allowed in total', async () => {
    t.db.close();
    const script = `
const { openDatabase } = await import(${sourceUrl('src/store/database.ts')});
const { createQuotaCounterStore } = await import(${sourceUrl('src/store/quotaCounters.ts')});
const db = openDatabase(${JSON.stringify(t.path)});
const quota = createQuotaCounterStore(db);
let allowed = 0;
for (let call = 0; call < 60; call += 1) if (quota.countQuotaCall(${JSON.stringify(workspaceId)}, ${now}, 150).allowed) allowed += 1;
db.close();
process.stdout.write(String(allowed));`;
    const runs = await Promise.all([1, 2, 3, 4].map(() => runScriptProcess(script)));
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
    const allowed = runs.map((run) => Number(run.stdout));
    expect(allowed.reduce((sum, value) => sum + value, 0)).toBe(150);
    const db = openDatabase(t.path);
    try {
      expect(createQuotaCounterStore(db).quotaUsage(workspaceId, now).used).toBe(150);
    } finally {
      db.close();
    }
  });
});
