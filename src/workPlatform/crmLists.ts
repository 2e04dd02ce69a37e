import { parseTimestamp } from '../store/workPlatformValues.js';
import type { ListRequest } from './listPages.js';

/** The `updatedSince` filter as milliseconds (the contract has checked its date-time shape). */
export function updatedSinceOf(value: string | undefined): number | undefined {
  return value ? parseTimestamp('updatedSince', value) : undefined;
}

/**
 * A CRM list's cursor binding: the filters are part of the listing, so a cursor issued under other
 * filters answers 422 cursor-mismatch, exactly as one issued under another sort or order.
 */
export function crmListRequest(
  collection: string,
  workspaceId: string,
  filters: Record<string, string | number | undefined>,
  sort: string,
  order: 'asc' | 'desc',
  cursor: string | undefined,
): ListRequest {
  const bound = Object.entries(filters)
    .map(([name, value]) => `${name}=${value ?? '*'}`)
    .join('&');
  return { resource: `${collection}?${bound}`, workspaceId, sort, order, cursor: cursor || undefined };
}
