import { cycleTimeStatistics, taskAnalyticsScope } from '../analytics.js';
import type { WorkPlatformHandler } from '../operationContext.js';

export const getTaskCycleTime: WorkPlatformHandler<'getTaskCycleTime'> = async (ctx) => {
  const { range, projectId, answered } = await taskAnalyticsScope(ctx.services, ctx.caller.workspace.id, ctx.query);
  const { overall, perBucket } = await ctx.services.analytics.cycleTimes(range, projectId);
  return {
    status: 200,
    body: {
      ...answered,
      overall: cycleTimeStatistics(overall),
      buckets: range.buckets.map(({ start, end, key }) => ({ start, end, cycleTime: cycleTimeStatistics(perBucket.get(key)) })),
    },
  };
};
