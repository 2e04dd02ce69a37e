import { cycleTimeStatistics, projectFilter } from '../analytics.js';
import { bucketedRange } from '../analyticsRange.js';
import type { WorkPlatformHandler } from '../operationContext.js';

export const getTaskCycleTime: WorkPlatformHandler<'getTaskCycleTime'> = (ctx) => {
  const { workspace } = ctx.caller;
  const range = bucketedRange(workspace.id, ctx.query);
  const projectId = projectFilter(ctx.services, workspace.id, ctx.query.projectId);
  const { overall, perBucket } = ctx.services.analytics.cycleTimes(range, projectId);
  return {
    status: 200,
    body: {
      from: ctx.query.from,
      to: ctx.query.to,
      bucket: range.bucket,
      projectId: projectId ?? null,
      overall: cycleTimeStatistics(overall),
      buckets: range.buckets.map(({ start, end, key }) => ({ start, end, cycleTime: cycleTimeStatistics(perBucket.get(key)) })),
    },
  };
};
