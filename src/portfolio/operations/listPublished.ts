import type { PortfolioItemKind } from '../../store/portfolioShapes.js';
import { NOT_FOUND_MESSAGE, PortfolioError } from '../errors.js';
import type { PortfolioHandler } from '../operationContext.js';

type ListOperationId = 'getOutcomes' | 'getPosts' | 'getPages' | 'getExperience' | 'getSkills' | 'getStats' | 'getAwards' | 'getEducation' | 'getTestimonials' | 'getLinks';

/** The shared body of every list operation: one page of published items with its paging data. */
export function listPublished<Op extends ListOperationId>(kind: PortfolioItemKind): PortfolioHandler<Op> {
  return (ctx) => {
    // Every list operation takes the shared Limit and Offset parameters, filled with their defaults.
    const { limit, offset } = ctx.query as { limit: number; offset: number };
    const page = ctx.content.listPublished(ctx.tenantId, kind, { limit, offset });
    if (!page) throw new PortfolioError('not_found', NOT_FOUND_MESSAGE);
    const hasMore = offset + page.items.length < page.total;
    const body = {
      items: page.items,
      paging: { limit, offset, total: page.total, hasMore, nextOffset: hasMore ? offset + page.items.length : null },
    };
    // Each kind's items are the item schema of its own operation; the store's kind map guarantees it.
    return { status: 200, body: body as PortfolioHandlerBody<Op> };
  };
}

type PortfolioHandlerBody<Op extends ListOperationId> = ReturnType<PortfolioHandler<Op>>['body'];
