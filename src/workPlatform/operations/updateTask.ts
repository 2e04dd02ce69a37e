import type { WorkPlatformHandler } from '../operationContext.js';
import { etagOf, requiredVersion } from '../versions.js';

export const updateTask: WorkPlatformHandler<'updateTask'> = async (ctx) => {
  const { workspace, actor } = ctx.caller;
  const expectedVersion = requiredVersion(ctx.headers['if-match']);
  const task = await ctx.services.tasks.updateTask(workspace.id, ctx.params.taskId, ctx.body, expectedVersion, actor);
  return { status: 200, headers: { etag: etagOf(task.version) }, body: task };
};
