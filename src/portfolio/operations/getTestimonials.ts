import type { PortfolioHandler } from '../operationContext.js';
import { listPublished } from '../listPublished.js';

export const getTestimonials: PortfolioHandler<'getTestimonials'> = listPublished('testimonial');
