import type { WorkPlatformHandler } from '../operationContext.js';
import { etagOf } from '../versions.js';

export const createProject: WorkPlatformHandler<'createProject'> = async (ctx) => {
  const { workspace, actor } = ctx.caller;
  const project = await ctx.services.projects.createProject(workspace.id, ctx.body, actor);
  return { status: 201, headers: { location: `/v1/projects/${project.id}`, etag: etagOf(project.version) }, body: project };
};
