import { NOT_FOUND_MESSAGE, PortfolioError } from '../errors.js';
import type { PortfolioHandler } from '../operationContext.js';

/** Sends the document's stored JSON as it is: rendered when the portfolio was written, encoded once per revision. */
export const getPortfolio: PortfolioHandler<'getPortfolio'> = async (ctx) => {
  const document = await ctx.services.content.publishedDocumentBytes(ctx.caller.tenantId);
  if (document === undefined) throw new PortfolioError('not_found', NOT_FOUND_MESSAGE);
  return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body: document };
};
