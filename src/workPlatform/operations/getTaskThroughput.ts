import { projectFilter } from '../analytics.js';
import { bucketedRange } from '../analyticsRange.js';
import type { WorkPlatformHandler } from '../operationContext.js';

export const getTaskThroughput: WorkPlatformHandler<'getTaskThroughput'> = (ctx) => {
  const { workspace } = ctx.caller;
  const range = bucketedRange(workspace.id, ctx.query);
  const projectId = projectFilter(ctx.services, workspace.id, ctx.query.projectId);
  const created = ctx.services.analytics.tasksCreated(range, projectId);
  const completed = ctx.services.analytics.tasksCompleted(range, projectId);
  const buckets = range.buckets.map(({ start, end, key }) => ({ start, end, created: created.get(key) ?? 0, completed: completed.get(key) ?? 0 }));
  return {
    status: 200,
    body: {
      from: ctx.query.from,
      to: ctx.query.to,
      bucket: range.bucket,
      projectId: projectId ?? null,
      totals: { created: buckets.reduce((sum, bucket) => sum + bucket.created, 0), completed: buckets.reduce((sum, bucket) => sum + bucket.completed, 0) },
      buckets,
    },
  };
};
