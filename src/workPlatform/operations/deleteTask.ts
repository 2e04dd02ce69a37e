import { authenticated, type WorkPlatformHandler } from '../operationContext.js';
import { versionFromIfMatch } from '../versions.js';

export const deleteTask: WorkPlatformHandler<'deleteTask'> = (ctx) => {
  const { workspace, actor } = authenticated(ctx);
  ctx.services.tasks.deleteTask(workspace.id, ctx.params.taskId, versionFromIfMatch(ctx.headers['if-match']) ?? null, actor);
  return { status: 204, body: undefined };
};
