import { cycleTimeStatistics, taskAnalyticsScope } from '../analytics.js';
import type { WorkPlatformHandler } from '../operationContext.js';

export const getTaskCycleTime: WorkPlatformHandler<'getTaskCycleTime'> = (ctx) => {
  const { range, projectId, answered } = taskAnalyticsScope(ctx.services, ctx.caller.workspace.id, ctx.query);
  const { overall, perBucket } = ctx.services.analytics.cycleTimes(range, projectId);
  return {
    status: 200,
    body: {
      ...answered,
      overall: cycleTimeStatistics(overall),
      buckets: range.buckets.map(({ start, end, key }) => ({ start, end, cycleTime: cycleTimeStatistics(perBucket.get(key)) })),
    },
  };
};
