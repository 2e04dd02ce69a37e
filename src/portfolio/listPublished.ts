import type { ListedItemByKind, PortfolioItemKind } from '../store/portfolioShapes.js';
import type { PageRequest } from '../store/portfolioContent.js';
import { NOT_FOUND_MESSAGE, PortfolioError } from './errors.js';
import type { EncodedReply, PortfolioContext } from './operationContext.js';

type ListOperationId = 'getOutcomes' | 'getPosts' | 'getPages' | 'getExperience' | 'getSkills' | 'getStats' | 'getAwards' | 'getEducation' | 'getTestimonials' | 'getLinks';

/** A list operation's 200 body for one page: the items and where the page sits in the whole list. */
export function encodeListPage<K extends PortfolioItemKind>({ limit, offset }: PageRequest) {
  return ({ items, total }: { items: ListedItemByKind[K][]; total: number }): Buffer => {
    const hasMore = offset + items.length < total;
    const body = { items, paging: { limit, offset, total, hasMore, nextOffset: hasMore ? offset + items.length : null } };
    return Buffer.from(JSON.stringify(body), 'utf8');
  };
}

/**
 * The shared body of every list operation: one page of published items with its paging data,
 * encoded once per revision of the portfolio and page.
 */
export function listPublished(kind: PortfolioItemKind): (ctx: PortfolioContext<ListOperationId>) => Promise<EncodedReply> {
  return async (ctx) => {
    // Every list operation takes the shared Limit and Offset parameters, filled with their defaults.
    const page = ctx.query as PageRequest;
    const answer = await ctx.services.content.encodedListPage(ctx.caller.tenantId, kind, page, encodeListPage(page));
    if (!answer) throw new PortfolioError('not_found', NOT_FOUND_MESSAGE);
    return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body: answer };
  };
}
