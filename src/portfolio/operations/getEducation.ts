import type { PortfolioHandler } from '../operationContext.js';
import { listPublished } from '../listPublished.js';

export const getEducation: PortfolioHandler<'getEducation'> = listPublished('credential');
