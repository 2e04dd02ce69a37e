import { listReply } from '../listPages.js';
import type { WorkPlatformHandler } from '../operationContext.js';

export const listProjects: WorkPlatformHandler<'listProjects'> = (ctx) =>
  listReply(ctx, ctx.caller.workspace.id, 'projects', ctx.query, null, (options) => ctx.services.projects.listProjects(ctx.caller.workspace.id, options));
