// The open work of a project (its tasks not DONE) as the AI summary reads it: counts over every
// open task, and the most urgent of them.
import { and, asc, count, desc, eq, lt, ne, sql } from 'drizzle-orm';
import { dueOnSortExpressionText, tasks } from '../../db/schema.js';
import { engineOf, type StoreSource } from './engine.js';
import { toTask, type Task, type TaskPriority, type TaskStatus } from './tasks.js';

export type OpenTaskStatus = Exclude<TaskStatus, 'DONE'>;

export interface ProjectOpenWork {
  openTaskCount: number;
  /** Open tasks whose due time has passed. */
  overdueTaskCount: number;
  countsByStatus: Record<OpenTaskStatus, number>;
  countsByPriority: Record<TaskPriority, number>;
  /** At most `limit` open tasks: highest priority first, then the earliest due (tasks without a due date last), then by id. */
  mostUrgent: Task[];
}

export interface ProjectOpenWorkReader {
  openWorkOfProject(workspaceId: string, projectId: string, options: { now: number; limit: number }): Promise<ProjectOpenWork>;
}

export function createProjectOpenWorkReader(source: StoreSource): ProjectOpenWorkReader {
  const engine = engineOf(source);
  const { orm } = engine;
  const openTasksOfProject = and(
    eq(tasks.workspaceId, sql.placeholder('workspaceId')),
    eq(tasks.projectId, sql.placeholder('projectId')),
    ne(tasks.status, 'DONE'),
  );
  const counts = engine.statement<{ status: TaskStatus; priority: TaskPriority; tasks: number; overdue: number }>(
    orm
      .select({ status: tasks.status, priority: tasks.priority, tasks: count(), overdue: count(sql`CASE WHEN ${lt(tasks.dueOn, sql.placeholder('now'))} THEN 1 END`) })
      .from(tasks)
      .where(openTasksOfProject)
      .groupBy(tasks.status, tasks.priority),
  );
  const mostUrgent = engine.statement<typeof tasks.$inferSelect>(
    orm
      .select()
      .from(tasks)
      .where(openTasksOfProject)
      .orderBy(desc(tasks.priorityRank), asc(sql.raw(dueOnSortExpressionText)), asc(tasks.id))
      .limit(sql.placeholder('limit')),
  );

  return {
    // Both reads in one snapshot: the counts and the list agree.
    openWorkOfProject: (workspaceId, projectId, { now, limit }) =>
      engine.snapshot(async () => {
        const work: ProjectOpenWork = {
          openTaskCount: 0,
          overdueTaskCount: 0,
          countsByStatus: { TODO: 0, IN_PROGRESS: 0, BLOCKED: 0 },
          countsByPriority: { LOW: 0, MEDIUM: 0, HIGH: 0 },
          mostUrgent: [],
        };
        for (const row of await counts.objects({ workspaceId, projectId, now })) {
          work.openTaskCount += row.tasks;
          work.overdueTaskCount += row.overdue;
          work.countsByStatus[row.status as OpenTaskStatus] += row.tasks;
          work.countsByPriority[row.priority] += row.tasks;
        }
        work.mostUrgent = (await mostUrgent.objects({ workspaceId, projectId, limit })).map((row) => toTask(row));
        return work;
      }),
  };
}
