import type { PortfolioHandler } from '../operationContext.js';
import { listPublished } from '../listPublished.js';

export const getPages: PortfolioHandler<'getPages'> = listPublished('page');
