import { NOT_FOUND_MESSAGE, PortfolioError } from '../errors.js';
import type { PortfolioHandler } from '../operationContext.js';
import type { ListKind } from '../portfolioReader.js';

/** The shared body of every list operation: one page of published items with its paging data. */
export function listPublished(kind: ListKind): PortfolioHandler {
  return (ctx) => {
    const limit = ctx.query.limit as number;
    const offset = ctx.query.offset as number;
    const page = ctx.content.listPublished(ctx.tenantId, kind, { limit, offset });
    if (!page) throw new PortfolioError('not_found', NOT_FOUND_MESSAGE);
    const hasMore = offset + page.items.length < page.total;
    return {
      status: 200,
      body: {
        items: page.items,
        paging: { limit, offset, total: page.total, hasMore, nextOffset: hasMore ? offset + page.items.length : null },
      },
    };
  };
}
