import { NOT_FOUND_MESSAGE, PortfolioError } from '../errors.js';
import type { PortfolioHandler } from '../operationContext.js';

export const getPortfolio: PortfolioHandler = (ctx) => {
  const document = ctx.content.publishedDocument(ctx.tenantId);
  if (document === undefined) throw new PortfolioError('not_found', NOT_FOUND_MESSAGE);
  return { status: 200, body: document };
};
