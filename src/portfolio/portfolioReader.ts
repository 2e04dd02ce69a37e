/** Kinds of listed portfolio content, each behind one list operation. */
export type ListKind = 'outcome' | 'post' | 'page' | 'experience' | 'skill' | 'stat' | 'award' | 'credential' | 'testimonial' | 'link';
export type SlugKind = 'outcome' | 'post' | 'page';

/** The read side of the published portfolio, as the request handlers need it. */
export interface PortfolioReader {
  /** Undefined when the tenant has no published portfolio. */
  publishedDocument(tenantId: string): unknown | undefined;
  profile(tenantId: string): unknown | undefined;
  /** Undefined when the tenant has no published portfolio; items in display order. */
  listPublished(tenantId: string, kind: ListKind, page: { limit: number; offset: number }): { items: unknown[]; total: number } | undefined;
  /** Undefined when there is no published portfolio, or the item is missing or unpublished. */
  publishedBySlug(tenantId: string, kind: SlugKind, slug: string): unknown | undefined;
}
