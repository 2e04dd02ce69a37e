import { publishedBySlug } from './publishedBySlug.js';

export const getPagesBySlug = publishedBySlug<'getPagesBySlug'>('page');
