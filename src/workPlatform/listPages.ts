// The lists of the Work-Platform API: where a page starts (the signed cursor), the envelope, and one
// reply for every versioned resource's list, kept encoded by the page cache.
import type { CursorCodec } from '../paging/cursor.js';
import { CursorError } from '../paging/cursor.js';
import type { KeysetAfter, KeysetListOptions, KeysetPage, SortOrder } from '../store/keysetPages.js';
import type { ListedCollection } from '../store/listPageCache.js';
import { parseTimestamp } from '../store/workPlatformValues.js';
import { JSON_CONTENT, type WorkPlatformServices } from './operationContext.js';

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
  // A cursor refused here is the funnel's `invalid-cursor` problem.
  const payload = codec.decode(request.cursor, request);
  if (payload.key === null) throw new CursorError('unreadable', 'cursor without a position');
  return { key: payload.key, id: payload.id };
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

/** The `updatedSince` filter as milliseconds (the contract has checked its date-time shape). */
export function updatedSinceOf(value: string | undefined): number | undefined {
  return value ? parseTimestamp('updatedSince', value) : undefined;
}

export interface ListQuery<S extends string> {
  sort: S;
  order: SortOrder;
  limit: number;
  cursor?: string;
}

/** What a list reply needs of the operation's context. */
export interface ListContext {
  services: Pick<WorkPlatformServices, 'cursors' | 'listPages'>;
  now: () => number;
}

/**
 * The reply of a versioned resource's list: the page kept encoded while the collection is unchanged
 * (src/store/listPageCache.ts), else the page `read` answers from where the cursor says. The given
 * filters are bound into the cursor, so a cursor issued under other filters answers 422
 * cursor-mismatch, exactly as one issued under another sort or order; a list without filters binds
 * none. A list that shows its items as of the instant it is read (`shownAsOf`) is kept only while it holds.
 */
export async function listReply<S extends string, F extends string, T>(
  ctx: ListContext,
  workspaceId: string,
  collection: ListedCollection,
  query: ListQuery<S>,
  filters: Partial<Record<F, string | number | undefined>> | null,
  read: (options: KeysetListOptions<S> & Partial<Record<F, string | number>>) => Promise<KeysetPage<T>>,
  shownAsOf = false,
): Promise<{ status: 200; headers: typeof JSON_CONTENT; body: Buffer }> {
  const { sort, order, limit } = query;
  const cursor = query.cursor || undefined;
  const request: ListRequest = { resource: filters ? filteredResource(collection, filters) : collection, workspaceId, sort, order, cursor };
  const { cursors, listPages } = ctx.services;
  // The page's nextCursor is signed: a page kept from before a key rotation would hand out cursors of the old key
  // for as long as the collection stays unchanged, past the old key's grace period.
  const signedWith = cursors.signingKeyId();
  const key = JSON.stringify([signedWith, sort, order, limit, cursor, ...Object.values(filters ?? {})]);
  const body = await listPages.page(
    workspaceId,
    collection,
    key,
    async () => {
      const page = await read({ sort, order, limit, ...filters, after: startAfter(cursors, request) } as KeysetListOptions<S> & Partial<Record<F, string | number>>);
      return { body: listEnvelope(cursors, request, page), shownUntil: page.shownUntil };
    },
    shownAsOf ? ctx.now() : undefined,
  );
  return { status: 200, headers: JSON_CONTENT, body };
}

/** The listing a cursor is bound to: the collection and every filter, given (its value) or not (`*`). */
function filteredResource(collection: string, filters: Record<string, string | number | undefined>): string {
  const bound = Object.entries(filters)
    .map(([name, value]) => `${name}=${value ?? '*'}`)
    .join('&');
  return `${collection}?${bound}`;
}
