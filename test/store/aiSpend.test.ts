import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';
import { createAiSpendStore, type AiSpendReservation } from '../../src/store/aiSpend.js';
import { makeClock, makeDatabase, type TempDatabase } from './factories.js';
import { makeWorkspace } from './workPlatformFactories.js';

let t: TempDatabase;
let workspaceId: string;
const clock = makeClock(Date.UTC(2026, 10, 25, 12, 0, 0));
beforeEach(async () => {
  t = makeDatabase();
  workspaceId = (await makeWorkspace(t.db)).workspaceId;
});
afterEach(() => t.cleanup());

const reservation = (overrides: Partial<AiSpendReservation> = {}): AiSpendReservation => ({
  workspaceId,
  day: '2026-11-25',
  operation: 'draftTasks',
  model: 'test-model',
  requestId: 'req_1',
  reservedMillicents: 400,
  capMillicents: 1000,
  ...overrides,
});

describe('AI spend ledger', () => {
  it('reserves while the day stays within the cap, counting open reservations at their amount', async () => {
    const store = createAiSpendStore(t.db, { now: clock.now });
    expect(await store.reserve(reservation())).toMatchObject({ reserved: true, spentMillicents: 400 });
    expect(await store.reserve(reservation())).toMatchObject({ reserved: true, spentMillicents: 800 });
    expect(await store.reserve(reservation())).toEqual({ reserved: false, spentMillicents: 800 });
    expect(await store.reserve(reservation({ reservedMillicents: 200 }))).toMatchObject({ reserved: true, spentMillicents: 1000 });
    expect(await store.spentOnDay(workspaceId, '2026-11-25')).toBe(1000);
    expect(await store.spentOnDay(workspaceId, '2026-11-26')).toBe(0);
  });

  it('counts a settled entry at its actual cost and a released one at nothing', async () => {
    const store = createAiSpendStore(t.db, { now: clock.now });
    const first = await store.reserve(reservation());
    const second = await store.reserve(reservation());
    if (!first.reserved || !second.reserved) throw new Error('expected both reserved');
    await store.settle(first.entryId, { actualMillicents: 123, promptTokens: 100, completionTokens: 20 });
    await store.release(second.entryId);
    expect(await store.spentOnDay(workspaceId, '2026-11-25')).toBe(123);
    const rows = t.db.prepare('SELECT state, actual_millicents AS actual, prompt_tokens AS promptTokens, closed_at AS closedAt FROM ai_spend_entries ORDER BY rowid').all();
    expect(rows).toEqual([
      { state: 'settled', actual: 123, promptTokens: 100, closedAt: clock.now() },
      { state: 'released', actual: null, promptTokens: null, closedAt: clock.now() },
    ]);
    // An entry is settled once: a second settlement is a bug, not a new charge.
    await expect(store.settle(first.entryId, { actualMillicents: 1, promptTokens: 1, completionTokens: 1 })).rejects.toThrow(/not an open reservation/);
  });

  it('never caps a null cap, keeps workspaces apart, and refuses a reservation that is not a whole number of millicents', async () => {
    const store = createAiSpendStore(t.db, { now: clock.now });
    expect((await store.reserve(reservation({ reservedMillicents: 5_000_000, capMillicents: null }))).reserved).toBe(true);
    const other = (await makeWorkspace(t.db)).workspaceId;
    expect((await store.reserve(reservation({ workspaceId: other }))).reserved).toBe(true);
    expect(await store.spentOnDay(other, '2026-11-25')).toBe(400);
    await expect(store.reserve(reservation({ reservedMillicents: 1.5 }))).rejects.toThrow(RangeError);
  });

  it('shares the cap with another connection to the same file (another server process)', async () => {
    const otherProcess = openDatabase(t.path);
    try {
      const here = createAiSpendStore(t.db, { now: clock.now });
      const there = createAiSpendStore(otherProcess, { now: clock.now });
      expect((await here.reserve(reservation({ reservedMillicents: 700 }))).reserved).toBe(true);
      expect(await there.reserve(reservation({ reservedMillicents: 700 }))).toEqual({ reserved: false, spentMillicents: 700 });
      expect((await there.reserve(reservation({ reservedMillicents: 300 }))).reserved).toBe(true);
    } finally {
      otherProcess.close();
    }
  });
});
