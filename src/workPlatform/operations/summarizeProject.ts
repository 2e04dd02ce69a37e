import { chargedAiCall } from '../aiCalls.js';
import { twoPhaseHandler, type WorkPlatformTwoPhaseHandler } from '../operationContext.js';
import { ApiProblem } from '../problems.js';

/** The most urgent open tasks the model reads; the counts cover every open task. */
const TASKS_READ = 200;

export const summarizeProject: WorkPlatformTwoPhaseHandler<'summarizeProject'> = twoPhaseHandler(async (ctx) => {
  const { workspace } = ctx.caller;
  const { projectId } = ctx.body;
  const project = await ctx.services.projects.getProject(workspace.id, projectId);
  if (!project) throw new ApiProblem('not-found', { detail: `No project ${projectId} in this workspace.`, code: 'project-not-found' });
  const { provider, openWork: reader } = ctx.services.ai;
  const now = ctx.now();
  const openWork = await reader.openWorkOfProject(workspace.id, projectId, { now, limit: TASKS_READ });
  const call = provider.summarizeProject({ project: { id: project.id, name: project.name }, openWork, now });
  const charged = await chargedAiCall(ctx, 'summarizeProject', call);
  const titles = new Map(openWork.mostUrgent.map((task) => [task.id, task.title]));
  return async () => {
    await charged.settle();
    return {
      status: 200,
      body: {
        model: provider.model,
        projectId,
        summary: charged.result.summary,
        openTaskCount: openWork.openTaskCount,
        overdueTaskCount: openWork.overdueTaskCount,
        highlights: charged.result.highlights.map(({ taskId, reason }) => ({ taskId, title: titles.get(taskId)!, reason })),
        usage: charged.usage,
      },
    };
  };
});
