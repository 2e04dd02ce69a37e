import { taskAnalyticsScope } from '../analytics.js';
import type { WorkPlatformHandler } from '../operationContext.js';

export const getTaskThroughput: WorkPlatformHandler<'getTaskThroughput'> = async (ctx) => {
  const { range, projectId, answered } = await taskAnalyticsScope(ctx.services, ctx.caller.workspace.id, ctx.query);
  const created = await ctx.services.analytics.tasksCreated(range, projectId);
  const completed = await ctx.services.analytics.tasksCompleted(range, projectId);
  const buckets = range.buckets.map(({ start, end, key }) => ({ start, end, created: created.get(key) ?? 0, completed: completed.get(key) ?? 0 }));
  return {
    status: 200,
    body: {
      ...answered,
      totals: { created: buckets.reduce((sum, bucket) => sum + bucket.created, 0), completed: buckets.reduce((sum, bucket) => sum + bucket.completed, 0) },
      buckets,
    },
  };
};
