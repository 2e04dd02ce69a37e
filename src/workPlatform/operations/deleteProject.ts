import type { WorkPlatformHandler } from '../operationContext.js';
import { versionFromIfMatch } from '../versions.js';

export const deleteProject: WorkPlatformHandler<'deleteProject'> = (ctx) => {
  const { workspace, actor } = ctx.caller;
  ctx.services.projects.deleteProject(workspace.id, ctx.params.projectId, versionFromIfMatch(ctx.headers['if-match']) ?? null, actor);
  return { status: 204, body: undefined };
};
