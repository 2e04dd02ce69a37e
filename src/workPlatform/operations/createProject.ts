import type { WorkPlatformHandler } from '../operationContext.js';
import { createdHeaders } from '../versions.js';

export const createProject: WorkPlatformHandler<'createProject'> = async (ctx) => {
  const { workspace, actor } = ctx.caller;
  const project = await ctx.services.projects.createProject(workspace.id, ctx.body, actor);
  return { status: 201, headers: createdHeaders('createProject', project), body: project };
};
