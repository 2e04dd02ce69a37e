import { listPublished } from './listPublished.js';

export const getEducation = listPublished<'getEducation'>('credential');
