import { listPublished } from './listPublished.js';

export const getLinks = listPublished<'getLinks'>('link');
