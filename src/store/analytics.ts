// Read-only aggregates of a workspace's tasks and deals over a time range, grouped in SQL by UTC
// calendar buckets. Each statement reads one covering index (db/schema.ts: tasks_created_at_idx,
// tasks_completed_at_idx, tasks_due_on_analytics_idx, deals_pipeline_idx) and groups by the bucket
// expression of its time column; bucketKey() is the same expression in TypeScript, so callers
// can place each grouped row in its bucket.
import { and, count, eq, gte, isNotNull, isNull, lt, or, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import { deals, projects, tasks, users, type DealStage, type TaskPriority } from '../../db/schema.js';
import { workspaceRowStatement } from './drizzle.js';
import { engineOf, type DialectSql, type StoreSource } from './engine.js';

export const bucketSizes = ['day', 'week', 'month'] as const;
export type BucketSize = (typeof bucketSizes)[number];

/** A bucket's key: the day number (day), the Monday-based week number (week), or `YYYY-MM` (month). */
export type BucketKey = number | string;

const DAY_MS = 86_400_000;

/**
 * The bucket of a time column (milliseconds since the epoch, UTC), in SQL. Day and week are integer
 * arithmetic on the day number (1970-01-01 was a Thursday, so +3 makes weeks start on Monday): the
 * columns are integers on both engines (bigint on PostgreSQL), so `/` truncates on both. Month is the
 * dialect's UTC calendar. Times before 1970 are outside every range the API accepts.
 */
function bucketExpression(dialect: DialectSql, size: BucketSize, column: SQLWrapper): SQL {
  switch (size) {
    case 'day':
      return sql`(${column} / ${sql.raw(String(DAY_MS))})`;
    case 'week':
      return sql`((${column} / ${sql.raw(String(DAY_MS))} + 3) / 7)`;
    case 'month':
      return dialect.utcMonth(column);
  }
}

/** bucketExpression() in TypeScript: the key of the bucket an instant falls in. */
export function bucketKey(size: BucketSize, at: number): BucketKey {
  const day = Math.floor(at / DAY_MS);
  switch (size) {
    case 'day':
      return day;
    case 'week':
      return Math.floor((day + 3) / 7);
    case 'month':
      return new Date(at).toISOString().slice(0, 7);
  }
}

/** A time range [from, to) in milliseconds, bucketed by `bucket`. */
export interface AnalyticsRange {
  workspaceId: string;
  from: number;
  to: number;
  bucket: BucketSize;
}

export interface CycleTimeRow {
  completed: number;
  /** Milliseconds; null when `completed` is 0. */
  meanMs: number | null;
  medianMs: number | null;
  p90Ms: number | null;
  maxMs: number | null;
}

export interface OverdueCounts {
  /** Overdue at `now` by priority. */
  current: Record<TaskPriority, number>;
  /** Tasks that became overdue before the range and stopped being overdue before it: the count at `from` is beforeRange.started − beforeRange.ended. */
  beforeRange: { started: number; ended: number };
  /** Per bucket: tasks that became overdue in it, and tasks whose overdue time ended in it (completed). */
  started: Map<BucketKey, number>;
  ended: Map<BucketKey, number>;
}

export interface PipelineRow {
  key: BucketKey;
  stage: DealStage;
  currency: string;
  deals: number;
  /** Exact sum of amount_minor. */
  amountMinor: bigint;
}

export interface AnalyticsStore {
  /** Whether the workspace has this project / user: a filter naming another workspace's answers 404. */
  hasProject(workspaceId: string, projectId: string): Promise<boolean>;
  hasUser(workspaceId: string, userId: string): Promise<boolean>;
  tasksCreated(range: AnalyticsRange, projectId: string | undefined): Promise<Map<BucketKey, number>>;
  tasksCompleted(range: AnalyticsRange, projectId: string | undefined): Promise<Map<BucketKey, number>>;
  /** Cycle times of the tasks completed in the range: per bucket of completion, and over the whole range (both read in one snapshot). */
  cycleTimes(range: AnalyticsRange, projectId: string | undefined): Promise<{ overall: CycleTimeRow; perBucket: Map<BucketKey, CycleTimeRow> }>;
  /** Overdue tasks now and the changes per bucket (both read in one snapshot). */
  overdue(range: AnalyticsRange, projectId: string | undefined, now: number): Promise<OverdueCounts>;
  /** Deals created in the range, per bucket of creation, current stage and currency. */
  pipeline(range: AnalyticsRange, ownerId: string | undefined): Promise<PipelineRow[]>;
}

/** The statements are built on first use per bucket size and filter, then kept. */
function memo<T>(build: (key: string) => T): (key: string) => T {
  const built = new Map<string, T>();
  return (key) => {
    let value = built.get(key);
    if (value === undefined) {
      value = build(key);
      built.set(key, value);
    }
    return value;
  };
}

const placeholder = (name: string) => sql.placeholder(name);
/** The bucket column's alias: statements group by it rather than repeat an expression that holds placeholders. */
const BUCKET = 'bucket_key';
const byBucket = sql`${sql.identifier(BUCKET)}`;
const LOW_32_BITS = sql.raw('4294967295');

export function createAnalyticsStore(source: StoreSource): AnalyticsStore {
  const engine = engineOf(source);
  const { orm, dialect } = engine;
  const projectExists = workspaceRowStatement(engine, projects);
  const userExists = workspaceRowStatement(engine, users);
  const bucketOf = (size: BucketSize, column: SQLWrapper) => bucketExpression(dialect, size, column);

  const ofWorkspace = eq(tasks.workspaceId, placeholder('workspaceId'));
  const ofProject = (filtered: boolean) => (filtered ? eq(tasks.projectId, placeholder('projectId')) : undefined);
  const inRange = (column: typeof tasks.createdAt | typeof tasks.completedAt) => and(gte(column, placeholder('from')), lt(column, placeholder('to')));

  const countPerBucket = (column: typeof tasks.createdAt | typeof tasks.completedAt) =>
    memo((variant: string) => {
      const [size, filtered] = variant.split(':') as [BucketSize, string];
      const key = bucketOf(size, column);
      return engine.statement<{ key: BucketKey; tasks: number }>(
        orm
          .select({ key: sql<BucketKey>`${key}`.as(BUCKET), tasks: count() })
          .from(tasks)
          .where(and(ofWorkspace, inRange(column), ofProject(filtered === 'project')))
          .groupBy(byBucket),
      );
    });
  const createdStatements = countPerBucket(tasks.createdAt);
  const completedStatements = countPerBucket(tasks.completedAt);

  // Nearest-rank percentiles in one pass: number each bucket's durations in order (window
  // functions), then take the smallest duration whose rank reaches p % of the bucket's count.
  const cycleTimeStatements = memo((variant: string) => {
    const [size, filtered] = variant.split(':') as [BucketSize | 'all', string];
    const key = size === 'all' ? sql`0` : bucketOf(size, tasks.completedAt);
    const duration = sql`${tasks.completedAt} - ${tasks.createdAt}`;
    const durations = orm
      .select({
        key: sql<BucketKey>`${key}`.as(BUCKET),
        duration: sql<number>`${duration}`.as('duration'),
        rank: sql<number>`row_number() OVER (PARTITION BY ${key} ORDER BY ${duration})`.as('duration_rank'),
        size: sql<number>`count(*) OVER (PARTITION BY ${key})`.as('bucket_size'),
      })
      .from(tasks)
      .where(and(ofWorkspace, inRange(tasks.completedAt), ofProject(filtered === 'project')))
      .as('durations');
    const percentile = (percent: number) => sql<number>`min(${durations.duration}) FILTER (WHERE ${durations.rank} * 100 >= ${durations.size} * ${sql.raw(String(percent))})`;
    return engine.statement<CycleTimeRow & { key: BucketKey }>(
      orm
        .select({
          key: durations.key,
          completed: count(),
          // PostgreSQL's avg() is numeric, which its driver reads as text.
          meanMs: sql<number>`avg(${durations.duration})`.mapWith(Number),
          medianMs: percentile(50),
          p90Ms: percentile(90),
          maxMs: sql<number>`max(${durations.duration})`,
        })
        .from(durations)
        .groupBy(sql`${durations.key}`),
    );
  });

  // A task is overdue from the later of its due date and its creation until its completion.
  // Only tasks that were overdue at some instant before `cap` (the range's end, or now if earlier) count.
  const overdueFrom = dialect.greatest(tasks.createdAt, tasks.dueOn);
  const everOverdue = (filtered: boolean) =>
    and(
      ofWorkspace,
      isNotNull(tasks.dueOn),
      lt(tasks.dueOn, placeholder('cap')),
      sql`${overdueFrom} < ${placeholder('cap')}`,
      or(isNull(tasks.completedAt), sql`${tasks.completedAt} > ${overdueFrom}`),
      ofProject(filtered),
    );
  const overdueStarts = memo((variant: string) => {
    const [size, filtered] = variant.split(':') as [BucketSize, string];
    // null: before the range.
    const key = sql`CASE WHEN ${overdueFrom} < ${placeholder('from')} THEN NULL ELSE ${bucketOf(size, overdueFrom)} END`;
    return engine.statement<{ key: BucketKey | null; tasks: number }>(
      orm
        .select({ key: sql<BucketKey | null>`${key}`.as(BUCKET), tasks: count() })
        .from(tasks)
        .where(everOverdue(filtered === 'project'))
        .groupBy(byBucket),
    );
  });
  const overdueEnds = memo((variant: string) => {
    const [size, filtered] = variant.split(':') as [BucketSize, string];
    const key = sql`CASE WHEN ${tasks.completedAt} < ${placeholder('from')} THEN NULL ELSE ${bucketOf(size, tasks.completedAt)} END`;
    return engine.statement<{ key: BucketKey | null; tasks: number }>(
      orm
        .select({ key: sql<BucketKey | null>`${key}`.as(BUCKET), tasks: count() })
        .from(tasks)
        .where(and(everOverdue(filtered === 'project'), lt(tasks.completedAt, placeholder('cap'))))
        .groupBy(byBucket),
    );
  });
  const overdueNow = memo((filtered: string) =>
    engine.statement<{ priority: TaskPriority; tasks: number }>(
      orm
        .select({ priority: tasks.priority, tasks: count() })
        .from(tasks)
        .where(and(ofWorkspace, isNotNull(tasks.dueOn), lt(tasks.dueOn, placeholder('now')), isNull(tasks.completedAt), ofProject(filtered === 'project')))
        .groupBy(tasks.priority),
    ),
  );

  // Sums split in two halves of the amount (each exact in 64 bits for any number of rows that
  // fits in memory), joined exactly with bigint: a sum may pass 2^63, where SQLite's sum() fails.
  // Each half's sum is cast back to an integer: PostgreSQL's sum() of bigint is numeric.
  const pipelineStatements = memo((variant: string) => {
    const [size, filtered] = variant.split(':') as [BucketSize, string];
    const key = bucketOf(size, deals.createdAt);
    return engine.statement<Omit<PipelineRow, 'amountMinor'> & { high: number; low: number }>(
      orm
        .select({
          key: sql<BucketKey>`${key}`.as(BUCKET),
          stage: deals.stage,
          currency: deals.currency,
          deals: count(),
          high: sql<number>`cast(sum(${deals.amountMinor} >> 32) as bigint)`,
          low: sql<number>`cast(sum(${deals.amountMinor} & ${LOW_32_BITS}) as bigint)`,
        })
        .from(deals)
        .where(
          and(
            eq(deals.workspaceId, placeholder('workspaceId')),
            gte(deals.createdAt, placeholder('from')),
            lt(deals.createdAt, placeholder('to')),
            filtered === 'owner' ? eq(deals.ownerId, placeholder('ownerId')) : undefined,
          ),
        )
        .groupBy(byBucket, deals.stage, deals.currency),
    );
  });

  const variant = (size: string, filter: string | undefined, name: string) => `${size}:${filter === undefined ? 'all' : name}`;
  const toMap = (rows: { key: BucketKey | null; tasks: number }[]) => new Map(rows.filter((row) => row.key !== null).map((row) => [row.key as BucketKey, row.tasks]));
  const cycleTimeRow = (row: Omit<CycleTimeRow, 'completed'> & { completed: number }): CycleTimeRow => ({
    completed: row.completed,
    meanMs: row.meanMs,
    medianMs: row.medianMs,
    p90Ms: row.p90Ms,
    maxMs: row.maxMs,
  });
  const noCycleTimes: CycleTimeRow = { completed: 0, meanMs: null, medianMs: null, p90Ms: null, maxMs: null };

  const overdueRead = (range: AnalyticsRange, projectId: string | undefined, now: number): Promise<OverdueCounts> =>
    engine.snapshot(async () => {
      const args = { workspaceId: range.workspaceId, from: range.from, cap: Math.min(range.to, now), projectId };
      const starts = await overdueStarts(variant(range.bucket, projectId, 'project')).objects(args);
      const ends = await overdueEnds(variant(range.bucket, projectId, 'project')).objects(args);
      const current: Record<TaskPriority, number> = { LOW: 0, MEDIUM: 0, HIGH: 0 };
      for (const row of await overdueNow(projectId === undefined ? 'all' : 'project').objects({ workspaceId: range.workspaceId, now, projectId })) {
        current[row.priority] = row.tasks;
      }
      return {
        current,
        beforeRange: { started: starts.find((row) => row.key === null)?.tasks ?? 0, ended: ends.find((row) => row.key === null)?.tasks ?? 0 },
        started: toMap(starts),
        ended: toMap(ends),
      };
    });

  const cycleTimeRead = (range: AnalyticsRange, projectId: string | undefined) =>
    engine.snapshot(async () => {
      const args = { workspaceId: range.workspaceId, from: range.from, to: range.to, projectId };
      const overall = (await cycleTimeStatements(variant('all', projectId, 'project')).objects(args))[0];
      const perBucket = new Map((await cycleTimeStatements(variant(range.bucket, projectId, 'project')).objects(args)).map((row) => [row.key, cycleTimeRow(row)]));
      return { overall: overall ? cycleTimeRow(overall) : noCycleTimes, perBucket };
    });

  return {
    hasProject: async (workspaceId, projectId) => (await engine.read(() => projectExists.row({ workspaceId, id: projectId }))) !== undefined,
    hasUser: async (workspaceId, userId) => (await engine.read(() => userExists.row({ workspaceId, id: userId }))) !== undefined,
    tasksCreated: async (range, projectId) => toMap(await engine.read(() => createdStatements(variant(range.bucket, projectId, 'project')).objects({ ...range, projectId }))),
    tasksCompleted: async (range, projectId) => toMap(await engine.read(() => completedStatements(variant(range.bucket, projectId, 'project')).objects({ ...range, projectId }))),
    cycleTimes: (range, projectId) => cycleTimeRead(range, projectId),
    overdue: (range, projectId, now) => overdueRead(range, projectId, now),
    pipeline: async (range, ownerId) =>
      (await engine.read(() => pipelineStatements(variant(range.bucket, ownerId, 'owner')).objects({ ...range, ownerId }))).map((row) => ({
        key: row.key,
        stage: row.stage,
        currency: row.currency,
        deals: row.deals,
        amountMinor: (BigInt(row.high) << 32n) + BigInt(row.low),
      })),
  };
}
