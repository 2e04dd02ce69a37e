import { taskAnalyticsScope } from '../analytics.js';
import type { WorkPlatformHandler } from '../operationContext.js';
import { formatTimestamp } from '../../store/workPlatformValues.js';

export const getOverdueTasks: WorkPlatformHandler<'getOverdueTasks'> = async (ctx) => {
  const { range, projectId, answered } = await taskAnalyticsScope(ctx.services, ctx.caller.workspace.id, ctx.query);
  const now = ctx.now();
  const counts = await ctx.services.analytics.overdue(range, projectId, now);
  // The count at the end of each bucket: the count at `from`, plus what became overdue, minus what stopped being overdue, so far.
  let overdue = counts.beforeRange.started - counts.beforeRange.ended;
  const buckets = range.buckets.map(({ start, end, key }) => {
    overdue += (counts.started.get(key) ?? 0) - (counts.ended.get(key) ?? 0);
    return { start, end, overdue };
  });
  const { LOW, MEDIUM, HIGH } = counts.current;
  return {
    status: 200,
    body: {
      ...answered,
      asOf: formatTimestamp(now),
      current: { total: LOW + MEDIUM + HIGH, byPriority: { LOW, MEDIUM, HIGH } },
      buckets,
    },
  };
};
