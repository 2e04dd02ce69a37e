import { listPublished } from './listPublished.js';

export const getPosts = listPublished<'getPosts'>('post');
