import { NOT_FOUND_MESSAGE, PortfolioError } from '../errors.js';
import type { PortfolioHandler } from '../operationContext.js';

/** Sends the document's stored JSON text as it is: it was rendered once, when the portfolio was written. */
export const getPortfolio: PortfolioHandler<'getPortfolio'> = (ctx) => {
  const documentJson = ctx.content.publishedDocumentJson(ctx.tenantId);
  if (documentJson === undefined) throw new PortfolioError('not_found', NOT_FOUND_MESSAGE);
  return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body: documentJson };
};
