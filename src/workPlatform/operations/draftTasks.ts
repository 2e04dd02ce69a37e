import { chargedAiCall } from '../aiCalls.js';
import { twoPhaseHandler, type WorkPlatformTwoPhaseHandler } from '../operationContext.js';
import { ApiProblem } from '../problems.js';

/** The contract's default of `maxDrafts`. */
const DEFAULT_MAX_DRAFTS = 10;

export const draftTasks: WorkPlatformTwoPhaseHandler<'draftTasks'> = twoPhaseHandler(async (ctx) => {
  const { workspace } = ctx.caller;
  const { projectId, text } = ctx.body;
  const maxDrafts = ctx.body.maxDrafts ?? DEFAULT_MAX_DRAFTS;
  const project = await ctx.services.projects.getProject(workspace.id, projectId);
  if (!project) throw new ApiProblem('not-found', { detail: `No project ${projectId} in this workspace.`, code: 'project-not-found' });
  const { provider } = ctx.services.ai;
  const call = provider.draftTasks({ projectName: project.name, text, maxDrafts, now: ctx.now() });
  const charged = await chargedAiCall(ctx, 'draftTasks', call);
  return async () => {
    await charged.settle();
    return { status: 200, body: { model: provider.model, projectId, drafts: charged.result, usage: charged.usage } };
  };
});
