import { listReply } from '../listPages.js';
import type { WorkPlatformHandler } from '../operationContext.js';

export const listTasks: WorkPlatformHandler<'listTasks'> = (ctx) =>
  listReply(ctx, ctx.caller.workspace.id, 'tasks', ctx.query, null, (options) => ctx.services.tasks.listTasks(ctx.caller.workspace.id, options));
