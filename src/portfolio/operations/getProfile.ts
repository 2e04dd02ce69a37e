import { NOT_FOUND_MESSAGE, PortfolioError } from '../errors.js';
import type { PortfolioHandler } from '../operationContext.js';

export const getProfile: PortfolioHandler<'getProfile'> = async (ctx) => {
  const profile = await ctx.services.content.profile(ctx.caller.tenantId);
  if (profile === undefined) throw new PortfolioError('not_found', NOT_FOUND_MESSAGE);
  return { status: 200, body: profile };
};
