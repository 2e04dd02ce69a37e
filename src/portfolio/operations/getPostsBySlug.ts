import { publishedBySlug } from './publishedBySlug.js';

export const getPostsBySlug = publishedBySlug<'getPostsBySlug'>('post');
