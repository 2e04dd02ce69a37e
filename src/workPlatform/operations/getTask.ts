import { ApiProblem } from '../problems.js';
import type { WorkPlatformHandler } from '../operationContext.js';
import { etagOf } from '../versions.js';

export const getTask: WorkPlatformHandler<'getTask'> = async (ctx) => {
  const { workspace } = ctx.caller;
  const task = await ctx.services.tasks.getTask(workspace.id, ctx.params.taskId);
  if (!task) throw new ApiProblem('not-found', { detail: `No task ${ctx.params.taskId} in this workspace.`, code: 'task-not-found' });
  return { status: 200, headers: { etag: etagOf(task.version) }, body: task };
};
