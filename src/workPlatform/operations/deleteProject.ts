import type { WorkPlatformHandler } from '../operationContext.js';
import { versionFromIfMatch } from '../versions.js';

export const deleteProject: WorkPlatformHandler<'deleteProject'> = async (ctx) => {
  const { workspace, actor } = ctx.caller;
  await ctx.services.projects.deleteProject(workspace.id, ctx.params.projectId, versionFromIfMatch(ctx.headers['if-match']) ?? null, actor);
  return { status: 204, body: undefined };
};
