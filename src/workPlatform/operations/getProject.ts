import { ApiProblem } from '../problems.js';
import type { WorkPlatformHandler } from '../operationContext.js';
import { etagOf } from '../versions.js';

export const getProject: WorkPlatformHandler<'getProject'> = async (ctx) => {
  const { workspace } = ctx.caller;
  const project = await ctx.services.projects.getProject(workspace.id, ctx.params.projectId);
  if (!project) throw new ApiProblem('not-found', { detail: `No project ${ctx.params.projectId} in this workspace.`, code: 'project-not-found' });
  return { status: 200, headers: { etag: etagOf(project.version) }, body: project };
};
