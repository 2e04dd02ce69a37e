// What the /v1/analytics handlers share: the filters checked against the workspace, and the
// conversions from the store's milliseconds to the contract's seconds.
import { NotFoundError } from '../store/workPlatformErrors.js';
import type { CycleTimeRow } from '../store/analytics.js';
import type { WorkPlatformServices } from './operationContext.js';
import type { components } from '../../generated/work-platform/types.js';

/** The project filter, after checking the workspace has it (another workspace's answers 404 like a missing one). */
export function projectFilter(services: WorkPlatformServices, workspaceId: string, projectId: string | undefined): string | undefined {
  if (!projectId) return undefined;
  if (!services.analytics.hasProject(workspaceId, projectId)) throw new NotFoundError('project', projectId);
  return projectId;
}

/** The owner filter, after checking the workspace has the user. */
export function ownerFilter(services: WorkPlatformServices, workspaceId: string, ownerId: string | undefined): string | undefined {
  if (!ownerId) return undefined;
  if (!services.analytics.hasUser(workspaceId, ownerId)) throw new NotFoundError('user', ownerId);
  return ownerId;
}

const seconds = (milliseconds: number | null) => (milliseconds === null ? null : Math.round(milliseconds / 1000));

export function cycleTimeStatistics(row: CycleTimeRow | undefined): components['schemas']['CycleTimeStatistics'] {
  if (!row) return { completed: 0, meanSeconds: null, medianSeconds: null, p90Seconds: null, maxSeconds: null };
  return { completed: row.completed, meanSeconds: seconds(row.meanMs), medianSeconds: seconds(row.medianMs), p90Seconds: seconds(row.p90Ms), maxSeconds: seconds(row.maxMs) };
}
