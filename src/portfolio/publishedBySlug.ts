import type { SlugKind } from '../store/portfolioShapes.js';
import { NOT_FOUND_MESSAGE, PortfolioError } from './errors.js';
import type { EncodedReply, PortfolioContext } from './operationContext.js';

type SlugOperationId = 'getOutcomesBySlug' | 'getPostsBySlug' | 'getPagesBySlug';

/**
 * The shared body of the by-slug operations: the item's stored JSON as it is (rendered at import).
 * A missing and an unpublished item answer the same 404.
 */
export function publishedBySlug(kind: SlugKind): (ctx: PortfolioContext<SlugOperationId>) => Promise<EncodedReply> {
  return async (ctx) => {
    const item = await ctx.services.content.publishedBySlugBytes(ctx.caller.tenantId, kind, ctx.params.slug);
    if (item === undefined) throw new PortfolioError('not_found', NOT_FOUND_MESSAGE);
    return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body: item };
  };
}
