import type { SlugKind } from '../../store/portfolioShapes.js';
import { NOT_FOUND_MESSAGE, PortfolioError } from '../errors.js';
import type { PortfolioHandler } from '../operationContext.js';

type SlugOperationId = 'getOutcomesBySlug' | 'getPostsBySlug' | 'getPagesBySlug';

/** The shared body of the by-slug operations: a missing and an unpublished item answer the same 404. */
export function publishedBySlug<Op extends SlugOperationId>(kind: SlugKind): PortfolioHandler<Op> {
  return (ctx) => {
    const item = ctx.content.publishedBySlug(ctx.tenantId, kind, ctx.params.slug);
    if (item === undefined) throw new PortfolioError('not_found', NOT_FOUND_MESSAGE);
    return { status: 200, body: item as ReturnType<PortfolioHandler<Op>>['body'] };
  };
}
