import type { CursorCodec } from '../paging/cursor.js';
import { CursorError } from '../paging/cursor.js';
import type { KeysetAfter, KeysetPage } from '../store/keysetPages.js';
import { cursorProblem } from './problems.js';

export interface ListRequest {
  resource: string;
  workspaceId: string;
  sort: string;
  order: 'asc' | 'desc';
  cursor: string | undefined;
}

/** Where a list continues: nothing for the first page, else the position signed into the cursor. */
export function startAfter(codec: CursorCodec, request: ListRequest): KeysetAfter | null {
  if (request.cursor === undefined) return null;
  try {
    const payload = codec.decode(request.cursor, request);
    if (payload.key === null) throw new CursorError('unreadable', 'cursor without a position');
    return { key: payload.key, id: payload.id };
  } catch (error) {
    if (error instanceof CursorError) throw cursorProblem(error);
    throw error;
  }
}

/** The list envelope: the page's items and a signed cursor for the next page, or null. */
export function listEnvelope<T>(codec: CursorCodec, request: ListRequest, page: KeysetPage<T>): { items: T[]; nextCursor: string | null } {
  const next = page.nextAfter;
  return {
    items: page.items,
    nextCursor: next
      ? codec.encode({ resource: request.resource, workspaceId: request.workspaceId, sort: request.sort, order: request.order, key: next.key, id: next.id })
      : null,
  };
}
