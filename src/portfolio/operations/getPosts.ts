import type { PortfolioHandler } from '../operationContext.js';
import { listPublished } from '../listPublished.js';

export const getPosts: PortfolioHandler<'getPosts'> = listPublished('post');
