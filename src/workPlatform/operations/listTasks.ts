import { listEnvelope, startAfter } from '../listPages.js';
import { authenticated, type WorkPlatformHandler } from '../operationContext.js';

export const listTasks: WorkPlatformHandler<'listTasks'> = (ctx) => {
  const { workspace } = authenticated(ctx);
  const { sort, order, limit, cursor } = ctx.query;
  const request = { resource: 'tasks', workspaceId: workspace.id, sort, order, cursor: cursor || undefined };
  const page = ctx.services.tasks.listTasks(workspace.id, { sort, order, limit, after: startAfter(ctx.services.cursors, request) });
  return { status: 200, body: listEnvelope(ctx.services.cursors, request, page) };
};
