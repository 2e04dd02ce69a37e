import type { WorkPlatformHandler } from '../operationContext.js';
import { createdHeaders } from '../versions.js';

export const createTask: WorkPlatformHandler<'createTask'> = async (ctx) => {
  const { workspace, actor } = ctx.caller;
  const task = await ctx.services.tasks.createTask(workspace.id, ctx.body, actor);
  return { status: 201, headers: createdHeaders('createTask', task), body: task };
};
