import type { PortfolioItemKind } from '../store/portfolioShapes.js';
import { NOT_FOUND_MESSAGE, PortfolioError } from './errors.js';
import type { EncodedReply, PortfolioContext } from './operationContext.js';

type ListOperationId = 'getOutcomes' | 'getPosts' | 'getPages' | 'getExperience' | 'getSkills' | 'getStats' | 'getAwards' | 'getEducation' | 'getTestimonials' | 'getLinks';

/**
 * The shared body of every list operation: one page of published items with its paging data,
 * encoded once per revision of the portfolio and page.
 */
export function listPublished(kind: PortfolioItemKind): (ctx: PortfolioContext<ListOperationId>) => EncodedReply {
  return (ctx) => {
    // Every list operation takes the shared Limit and Offset parameters, filled with their defaults.
    const { limit, offset } = ctx.query as { limit: number; offset: number };
    const answer = ctx.services.content.encodedListPage(ctx.caller.tenantId, kind, { limit, offset }, ({ items, total }) => {
      const hasMore = offset + items.length < total;
      const body = { items, paging: { limit, offset, total, hasMore, nextOffset: hasMore ? offset + items.length : null } };
      return Buffer.from(JSON.stringify(body), 'utf8');
    });
    if (!answer) throw new PortfolioError('not_found', NOT_FOUND_MESSAGE);
    return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body: answer };
  };
}
