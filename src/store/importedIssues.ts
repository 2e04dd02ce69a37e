// Issues of an outside tracker imported as tasks, remembered per workspace by the issue's id, so
// that importing again changes the same task instead of making another. One import is one
// transaction: its tasks (through the task store, with their task.created, task.updated and
// task.completed events) and the issue records commit together or not at all.
import { and, eq, sql } from 'drizzle-orm';
import { importedIssues, projects, storageLimits } from '../../db/schema.js';
import { placeholdersFor, workspaceRowStatement } from './drizzle.js';
import { engineOf, type StoreSource } from './engine.js';
import { defaultRandomBytes, type RandomBytes } from './ids.js';
import type { EventActor } from './outboxEvents.js';
import { createTaskStore, type UpdateTaskInput } from './tasks.js';
import { NotFoundError } from './workPlatformErrors.js';
import { changeWriter } from './workPlatformValues.js';

export interface IssueToImport {
  /** The tracker's id of the issue, stable across renames of its repository. */
  id: number;
  number: number;
  title: string;
  state: 'open' | 'closed';
}

export interface IssueImportCounts {
  created: number;
  updated: number;
  unchanged: number;
  skipped: number;
}

export interface ImportedIssueStore {
  /**
   * New issues become tasks of `projectId`; issues imported before change their task only where
   * the issue changed since the last import (title; state: closed → DONE, reopened → TODO); a
   * task deleted since is not made again.
   */
  importIssues(workspaceId: string, projectId: string, repository: string, issues: readonly IssueToImport[], actor: EventActor): Promise<IssueImportCounts>;
}

/** The issue's title as a task title: storable text, cut to the task title's limit, never empty. */
export function taskTitleOf(issue: IssueToImport): string {
  const storable = issue.title.toWellFormed().replaceAll('\u0000', '').trim();
  const title = Array.from(storable).slice(0, storageLimits.taskTitle).join('').trim();
  return title === '' ? `Issue #${issue.number}` : title;
}

const taskStatusOf = (state: IssueToImport['state']) => (state === 'closed' ? 'DONE' : 'TODO');

export function createImportedIssueStore(source: StoreSource, options: { now?: () => number; randomBytes?: RandomBytes } = {}): ImportedIssueStore {
  const now = options.now ?? Date.now;
  const engine = engineOf(source);
  const { orm } = engine;
  const tasks = createTaskStore(engine, { now, randomBytes: options.randomBytes ?? defaultRandomBytes });
  const projectExists = workspaceRowStatement(engine, projects);
  const theIssue = and(eq(importedIssues.workspaceId, sql.placeholder('workspaceId')), eq(importedIssues.issueId, sql.placeholder('issueId')));
  const selectOne = engine.statement<typeof importedIssues.$inferSelect>(orm.select().from(importedIssues).where(theIssue));
  const insert = engine.statement(orm.insert(importedIssues).values(placeholdersFor(importedIssues)));
  const update = engine.statement(
    orm
      .update(importedIssues)
      .set({
        repository: sql`${sql.placeholder('repository')}`,
        issueNumber: sql`${sql.placeholder('issueNumber')}`,
        issueTitle: sql`${sql.placeholder('issueTitle')}`,
        issueState: sql`${sql.placeholder('issueState')}`,
        importedAt: sql`${sql.placeholder('importedAt')}`,
      })
      .where(theIssue),
  );
  const write = changeWriter(engine, {});

  return {
    importIssues(workspaceId, projectId, repository, issues, actor) {
      return write(async () => {
        if (!(await projectExists.row({ workspaceId, id: projectId }))) throw new NotFoundError('project', projectId);
        const counts: IssueImportCounts = { created: 0, updated: 0, unchanged: 0, skipped: 0 };
        const at = now();
        for (const issue of issues) {
          const record = { workspaceId, issueId: issue.id, repository, issueNumber: issue.number, issueTitle: issue.title, issueState: issue.state, importedAt: at };
          const earlier = await selectOne.object({ workspaceId, issueId: issue.id });
          if (!earlier) {
            const task = await tasks.createTask(workspaceId, { projectId, title: taskTitleOf(issue), status: taskStatusOf(issue.state) }, actor);
            await insert.run({ ...record, taskId: task.id });
            counts.created += 1;
            continue;
          }
          await update.run(record);
          const task = await tasks.getTask(workspaceId, earlier.taskId);
          if (!task) {
            counts.skipped += 1;
            continue;
          }
          const patch: UpdateTaskInput = {};
          if (issue.title !== earlier.issueTitle) patch.title = taskTitleOf(issue);
          if (issue.state !== earlier.issueState) patch.status = taskStatusOf(issue.state);
          const changed = Object.keys(patch).length > 0 && (await tasks.updateTask(workspaceId, task.id, patch, task.version, actor)).version !== task.version;
          counts[changed ? 'updated' : 'unchanged'] += 1;
        }
        return counts;
      });
    },
  };
}
