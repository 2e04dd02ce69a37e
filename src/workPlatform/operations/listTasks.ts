import { listEnvelope, startAfter } from '../listPages.js';
import { JSON_CONTENT, type WorkPlatformHandler } from '../operationContext.js';

export const listTasks: WorkPlatformHandler<'listTasks'> = async (ctx) => {
  const { workspace } = ctx.caller;
  const { sort, order, limit, cursor } = ctx.query;
  const request = { resource: 'tasks', workspaceId: workspace.id, sort, order, cursor: cursor || undefined };
  const body = await ctx.services.listPages.page(workspace.id, 'tasks', JSON.stringify([sort, order, limit, request.cursor]), async () => {
    const page = await ctx.services.tasks.listTasks(workspace.id, { sort, order, limit, after: startAfter(ctx.services.cursors, request) });
    return listEnvelope(ctx.services.cursors, request, page);
  });
  return { status: 200, headers: JSON_CONTENT, body };
};
