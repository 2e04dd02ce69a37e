// What the /v1/analytics handlers share: the filters checked against the workspace, and the
// conversions from the store's milliseconds to the contract's seconds.
import { NotFoundError } from '../store/workPlatformErrors.js';
import type { BucketSize, CycleTimeRow } from '../store/analytics.js';
import { bucketedRange, type BucketedRange } from './analyticsRange.js';
import type { WorkPlatformServices } from './operationContext.js';
import type { components } from '../../generated/work-platform/types.js';

/** The project filter, after checking the workspace has it (another workspace's answers 404 like a missing one). */
export async function projectFilter(services: WorkPlatformServices, workspaceId: string, projectId: string | undefined): Promise<string | undefined> {
  if (!projectId) return undefined;
  if (!(await services.analytics.hasProject(workspaceId, projectId))) throw new NotFoundError('project', projectId);
  return projectId;
}

/**
 * The range and project filter of a task analytics query, checked (see bucketedRange and
 * projectFilter), and the members its answer opens with.
 */
export async function taskAnalyticsScope(
  services: WorkPlatformServices,
  workspaceId: string,
  query: { from: string; to: string; bucket?: BucketSize; projectId?: string },
): Promise<{ range: BucketedRange; projectId: string | undefined; answered: BucketedRange['answered'] & { projectId: string | null } }> {
  const range = bucketedRange(workspaceId, query);
  const projectId = await projectFilter(services, workspaceId, query.projectId);
  return { range, projectId, answered: { ...range.answered, projectId: projectId ?? null } };
}

/** The owner filter, after checking the workspace has the user. */
export async function ownerFilter(services: WorkPlatformServices, workspaceId: string, ownerId: string | undefined): Promise<string | undefined> {
  if (!ownerId) return undefined;
  if (!(await services.analytics.hasUser(workspaceId, ownerId))) throw new NotFoundError('user', ownerId);
  return ownerId;
}

const seconds = (milliseconds: number | null) => (milliseconds === null ? null : Math.round(milliseconds / 1000));

export function cycleTimeStatistics(row: CycleTimeRow | undefined): components['schemas']['CycleTimeStatistics'] {
  if (!row) return { completed: 0, meanSeconds: null, medianSeconds: null, p90Seconds: null, maxSeconds: null };
  return { completed: row.completed, meanSeconds: seconds(row.meanMs), medianSeconds: seconds(row.medianMs), p90Seconds: seconds(row.p90Ms), maxSeconds: seconds(row.maxMs) };
}
