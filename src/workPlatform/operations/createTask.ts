import type { WorkPlatformHandler } from '../operationContext.js';
import { etagOf } from '../versions.js';

export const createTask: WorkPlatformHandler<'createTask'> = async (ctx) => {
  const { workspace, actor } = ctx.caller;
  const task = await ctx.services.tasks.createTask(workspace.id, ctx.body, actor);
  return { status: 201, headers: { location: `/v1/tasks/${task.id}`, etag: etagOf(task.version) }, body: task };
};
