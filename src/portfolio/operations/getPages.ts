import { listPublished } from './listPublished.js';

export const getPages = listPublished<'getPages'>('page');
