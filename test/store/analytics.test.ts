import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bucketKey, bucketSizes, createAnalyticsStore } from '../../src/store/analytics.js';
import { makeDatabase, queryPlanOf, recordPreparedStatements, type TempDatabase } from './factories.js';

let t: TempDatabase;
beforeEach(() => {
  t = makeDatabase();
});
afterEach(() => t.cleanup());

describe('analytics store', () => {
  it('reads every aggregate from its index, never by scanning a table', async () => {
    const { statements, stop } = recordPreparedStatements(t.db);
    const store = createAnalyticsStore(t.db);
    for (const bucket of bucketSizes) {
      for (const filter of [undefined, 'x']) {
        const range = { workspaceId: 'ten_x', from: 0, to: Date.UTC(2027, 0, 1), bucket };
        await store.tasksCreated(range, filter && 'prj_x');
        await store.tasksCompleted(range, filter && 'prj_x');
        await store.cycleTimes(range, filter && 'prj_x');
        await store.overdue(range, filter && 'prj_x', Date.UTC(2026, 5, 1));
        await store.pipeline(range, filter && 'usr_x');
      }
    }
    stop();
    const aggregates = statements.filter((source) => source.startsWith('select') && /from "(tasks|deals)"/.test(source));
    // 5 reads (cycle time and overdue are several statements) × 3 bucket sizes × with and without a filter, and the whole-range cycle time.
    expect(aggregates.length).toBeGreaterThanOrEqual(40);
    for (const source of aggregates) {
      const plan = queryPlanOf(t.db, source);
      // The range the statement searches: the first bound column of its WHERE.
      const column = /"(tasks|deals)"\."(created_at|completed_at|due_on)" [<>]=? \?/.exec(source.slice(source.lastIndexOf(' where ')))?.slice(1).join('.');
      const index = {
        'tasks.created_at': /USING (COVERING )?INDEX tasks_created_at_idx \(workspace_id=\? AND created_at>\? AND created_at<\?\)/,
        'tasks.completed_at': /USING COVERING INDEX tasks_completed_at_idx \(workspace_id=\? AND completed_at>\? AND completed_at<\?\)/,
        'tasks.due_on': /USING COVERING INDEX tasks_due_on_analytics_idx \(workspace_id=\? AND due_on>\? AND due_on<\?\)/,
        'deals.created_at': /USING COVERING INDEX deals_pipeline_idx \(workspace_id=\? AND created_at>\? AND created_at<\?\)/,
      }[column ?? ''];
      expect(index, source).toBeDefined();
      expect(plan, source).toMatch(index!);
      expect(plan, source).not.toMatch(/SCAN (tasks|deals)\b/);
      // Without a project filter, the tasks created are counted from the index alone too.
      if (column === 'tasks.created_at' && !source.includes('project_id')) expect(plan).toContain('COVERING INDEX');
    }
  });

  it('keys an instant as the SQL does: days from the epoch, weeks from Monday, calendar months', () => {
    const sunday = Date.UTC(2026, 2, 1, 23, 59, 59, 999);
    const monday = Date.UTC(2026, 2, 2);
    expect(bucketKey('day', monday)).toBe((bucketKey('day', sunday) as number) + 1);
    expect(bucketKey('week', monday)).toBe((bucketKey('week', sunday) as number) + 1);
    expect(bucketKey('week', monday)).toBe(bucketKey('week', Date.UTC(2026, 2, 8, 23, 59)));
    expect(bucketKey('month', Date.UTC(2026, 1, 28, 23, 59, 59, 999))).toBe('2026-02');
    for (const bucket of bucketSizes) {
      for (const at of [0, sunday, monday, Date.UTC(2028, 1, 29, 12), Date.UTC(2026, 11, 31, 23, 59, 59, 999)]) {
        // The stored times are INTEGER columns, so the division is an integer division, as with this literal.
        const sql = bucket === 'month' ? `strftime('%Y-%m', ${at} / 1000, 'unixepoch')` : bucket === 'day' ? `${at} / 86400000` : `(${at} / 86400000 + 3) / 7`;
        expect(t.db.prepare(`SELECT ${sql}`).pluck().get(), `${bucket} ${at}`).toBe(bucketKey(bucket, at));
      }
    }
  });
});
