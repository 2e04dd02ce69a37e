import type { WorkPlatformHandler } from '../operationContext.js';
import { etagOf, requiredVersion } from '../versions.js';

export const updateProject: WorkPlatformHandler<'updateProject'> = async (ctx) => {
  const { workspace, actor } = ctx.caller;
  const expectedVersion = requiredVersion(ctx.headers['if-match']);
  const project = await ctx.services.projects.updateProject(workspace.id, ctx.params.projectId, ctx.body, expectedVersion, actor);
  return { status: 200, headers: { etag: etagOf(project.version) }, body: project };
};
