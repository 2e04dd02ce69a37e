import { projectFilter } from '../analytics.js';
import { bucketedRange } from '../analyticsRange.js';
import type { WorkPlatformHandler } from '../operationContext.js';
import { formatTimestamp } from '../../store/workPlatformValues.js';

export const getOverdueTasks: WorkPlatformHandler<'getOverdueTasks'> = (ctx) => {
  const { workspace } = ctx.caller;
  const range = bucketedRange(workspace.id, ctx.query);
  const projectId = projectFilter(ctx.services, workspace.id, ctx.query.projectId);
  const now = ctx.now();
  const counts = ctx.services.analytics.overdue(range, projectId, now);
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
      from: ctx.query.from,
      to: ctx.query.to,
      bucket: range.bucket,
      projectId: projectId ?? null,
      asOf: formatTimestamp(now),
      current: { total: LOW + MEDIUM + HIGH, byPriority: { LOW, MEDIUM, HIGH } },
      buckets,
    },
  };
};
