import type { WorkPlatformHandler } from '../operationContext.js';
import { versionFromIfMatch } from '../versions.js';

export const deleteTask: WorkPlatformHandler<'deleteTask'> = async (ctx) => {
  const { workspace, actor } = ctx.caller;
  await ctx.services.tasks.deleteTask(workspace.id, ctx.params.taskId, versionFromIfMatch(ctx.headers['if-match']) ?? null, actor);
  return { status: 204, body: undefined };
};
