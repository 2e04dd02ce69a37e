import { beforeAll, describe, expect, it } from 'vitest';
import { dealStages } from '../../src/store/deals.js';
import type { ContractClient } from '../support/contractClient.js';
import { analyticsWorkspace, expectedBuckets, getAnalytics, type Size } from '../support/analytics.js';
import { type TestApp, useTestApp } from '../support/testApp.js';
import { expectProblem, expectSuccess, liftCallLimits } from '../support/workPlatform.js';

let t: TestApp;
let client: ContractClient;
useTestApp(({ workPlatform: app }) => ({ t, client } = app), { liftCallLimits: true });

const at = (iso: string) => Date.parse(iso);
const MAX = Number.MAX_SAFE_INTEGER;
let ws: Awaited<ReturnType<typeof analyticsWorkspace>>;
interface Seeded {
  createdAt: number;
  stage: string;
  amountMinor: number;
  currency: string;
  ownerId: string;
}
const seeded: Seeded[] = [];

/** The stages of a set of deals as the contract lists them, summed here with bigint. */
function stageValues(deals: Seeded[]) {
  return dealStages.map((stage) => {
    const ofStage = deals.filter((deal) => deal.stage === stage);
    const currencies = [...new Set(ofStage.map((deal) => deal.currency))].sort();
    return {
      stage,
      deals: ofStage.length,
      amounts: currencies.map((currency) => {
        const inCurrency = ofStage.filter((deal) => deal.currency === currency);
        return { currency, deals: inCurrency.length, amountMinor: inCurrency.reduce((sum, deal) => sum + BigInt(deal.amountMinor), 0n).toString() };
      }),
    };
  });
}

beforeAll(async () => {
  ws = await analyticsWorkspace(t.store, t.sessionSecret);
  await liftCallLimits(t.store, ws.workspaceId);
  const add = async (deal: Omit<Seeded, 'ownerId'> & { ownerId?: string }) => {
    const full = { ownerId: ws.ownerId, ...deal };
    await ws.deal(full);
    seeded.push(full);
  };
  const instants = ['2026-01-31T23:59:59.999Z', '2026-02-01T00:00:00.000Z', '2026-02-15T10:00:00Z', '2026-02-28T23:59:59.999Z', '2026-03-01T00:00:00.000Z', '2026-03-02T00:00:00Z'];
  const currencies = ['EUR', 'USD', 'JPY', 'EUR'];
  for (const [index, iso] of instants.entries()) {
    for (let copy = 0; copy < 3; copy += 1) {
      await add({
        createdAt: at(iso) + copy,
        stage: dealStages[(index + copy) % dealStages.length]!,
        amountMinor: 1000 * (index + 1) + copy * 17,
        currency: currencies[(index + copy) % currencies.length]!,
        ownerId: copy === 2 ? ws.secondOwnerId : ws.ownerId,
      });
    }
  }
  // Sums beyond 2^63 (where SQLite's sum() fails) and beyond 2^53 (where a JSON number is inexact): exact as strings.
  for (let copy = 0; copy < 1100; copy += 1) await add({ createdAt: at('2026-02-20T10:00:00Z'), stage: 'won', amountMinor: MAX, currency: 'IDR' });
  const other = await analyticsWorkspace(t.store, t.sessionSecret);
  await other.deal({ createdAt: at('2026-02-15T10:00:00Z'), stage: 'won', amountMinor: 5, currency: 'EUR' });
});

const pipeline = (query: Record<string, string>, token = ws.pat) => getAnalytics(client, 'deals/pipeline', query, token);

describe('GET /v1/analytics/deals/pipeline', () => {
  for (const [size, from, to] of [
    ['day', '2026-01-31', '2026-03-03'],
    ['week', '2026-01-26', '2026-03-09'],
    ['month', '2026-01-01', '2026-04-01'],
  ] as [Size, string, string][]) {
    it(`sums the deals created per ${size} by stage and currency, never across currencies`, async () => {
      const body = expectSuccess(await pipeline({ from, to, bucket: size }), 200);
      const buckets = expectedBuckets(size, from, to);
      expect(body.buckets).toEqual(
        buckets.map(({ start, end, startMs, endMs }) => {
          const inBucket = seeded.filter((deal) => deal.createdAt >= startMs && deal.createdAt < endMs);
          return { start, end, deals: inBucket.length, stages: stageValues(inBucket) };
        }),
      );
      expect(body.totals).toEqual(stageValues(seeded.filter((deal) => deal.createdAt >= buckets[0]!.startMs && deal.createdAt < buckets.at(-1)!.endMs)));
    });
  }

  it('keeps huge sums exact', async () => {
    const body = expectSuccess(await pipeline({ from: '2026-02-20', to: '2026-02-21' }), 200);
    const won = body.totals.find((stage: { stage: string }) => stage.stage === 'won');
    expect(won.amounts).toEqual([{ currency: 'IDR', deals: 1100, amountMinor: (BigInt(MAX) * 1100n).toString() }]);
  });

  it('lists every stage with zeros in an empty bucket', async () => {
    const body = expectSuccess(await pipeline({ from: '2025-05-01', to: '2025-05-02' }), 200);
    expect(body.buckets).toEqual([{ start: '2025-05-01', end: '2025-05-02', deals: 0, stages: dealStages.map((stage) => ({ stage, deals: 0, amounts: [] })) }]);
  });

  it('narrows to one owner; a user of another workspace answers 404', async () => {
    const body = expectSuccess(await pipeline({ from: '2026-01-01', to: '2026-04-01', bucket: 'month', ownerId: ws.secondOwnerId }), 200);
    expect(body.ownerId).toBe(ws.secondOwnerId);
    expect(body.totals).toEqual(stageValues(seeded.filter((deal) => deal.ownerId === ws.secondOwnerId)));
    expectProblem(await pipeline({ from: '2026-01-01', to: '2026-04-01', ownerId: 'usr_demoOwnerMara' }), 404, 'not-found', 'user-not-found');
  });

  it('answers 422 to a bad range', async () => {
    expectProblem(await pipeline({ from: '2026-03-01', to: '2026-02-01' }), 422, 'validation', 'invalid-date-range');
  });
});
