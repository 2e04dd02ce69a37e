import type { components } from '../../../generated/work-platform/types.js';
import { dealStages } from '../../store/deals.js';
import type { PipelineRow } from '../../store/analytics.js';
import { ownerFilter } from '../analytics.js';
import { bucketedRange } from '../analyticsRange.js';
import type { WorkPlatformHandler } from '../operationContext.js';

type StageValue = components['schemas']['PipelineStageValue'];

/** Every stage, in the contract's order, with its deals and one sum per currency (ordered by code). */
function stageValues(rows: readonly Pick<PipelineRow, 'stage' | 'currency' | 'deals' | 'amountMinor'>[]): StageValue[] {
  return dealStages.map((stage) => {
    const ofStage = rows.filter((row) => row.stage === stage);
    const byCurrency = new Map<string, { deals: number; amountMinor: bigint }>();
    for (const row of ofStage) {
      const sum = byCurrency.get(row.currency) ?? { deals: 0, amountMinor: 0n };
      byCurrency.set(row.currency, { deals: sum.deals + row.deals, amountMinor: sum.amountMinor + row.amountMinor });
    }
    return {
      stage,
      deals: ofStage.reduce((total, row) => total + row.deals, 0),
      amounts: [...byCurrency]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([currency, sum]) => ({ currency, deals: sum.deals, amountMinor: sum.amountMinor.toString() })),
    };
  });
}

export const getDealPipeline: WorkPlatformHandler<'getDealPipeline'> = async (ctx) => {
  const { workspace } = ctx.caller;
  const range = bucketedRange(workspace.id, ctx.query);
  const ownerId = await ownerFilter(ctx.services, workspace.id, ctx.query.ownerId);
  const rows = await ctx.services.analytics.pipeline(range, ownerId);
  const byBucket = new Map<PipelineRow['key'], PipelineRow[]>();
  for (const row of rows) {
    const inBucket = byBucket.get(row.key);
    if (inBucket) inBucket.push(row);
    else byBucket.set(row.key, [row]);
  }
  return {
    status: 200,
    body: {
      ...range.answered,
      ownerId: ownerId ?? null,
      totals: stageValues(rows),
      buckets: range.buckets.map(({ start, end, key }) => {
        const inBucket = byBucket.get(key) ?? [];
        return { start, end, deals: inBucket.reduce((total, row) => total + row.deals, 0), stages: stageValues(inBucket) };
      }),
    },
  };
};
