import type { SlugKind } from '../../store/portfolioShapes.js';
import { NOT_FOUND_MESSAGE, PortfolioError } from '../errors.js';
import type { PortfolioHandler } from '../operationContext.js';

type SlugOperationId = 'getOutcomesBySlug' | 'getPostsBySlug' | 'getPagesBySlug';

/**
 * The shared body of the by-slug operations: the item's stored JSON as it is (rendered at import).
 * A missing and an unpublished item answer the same 404.
 */
export function publishedBySlug<Op extends SlugOperationId>(kind: SlugKind): PortfolioHandler<Op> {
  return (ctx) => {
    const item = ctx.content.publishedBySlugBytes(ctx.tenantId, kind, ctx.params.slug);
    if (item === undefined) throw new PortfolioError('not_found', NOT_FOUND_MESSAGE);
    return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body: item as ReturnType<PortfolioHandler<Op>>['body'] };
  };
}
