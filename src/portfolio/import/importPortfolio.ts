// Import and export of a tenant's whole portfolio in the documented import format
// (specs/portfolio/import-format.schema.json). An import validates the document, normalizes it,
// renders every item exactly as the API returns it, and has the store replace the tenant's
// portfolio in one transaction; an invalid document writes nothing.
import type { StoreSource } from '../../store/engine.js';
import { defaultRandomBytes, type RandomBytes } from '../../store/ids.js';
import { createPortfolioDocumentStore } from '../../store/portfolioDocuments.js';
import { listMembers, type ListMember, type PortfolioDocument, type PortfolioDocumentInput } from './importFormat.js';
import { normalizePortfolioDocument } from './normalizeImport.js';
import { renderPortfolio } from './renderPortfolio.js';
import { PortfolioImportError, validatePortfolioDocument } from './validateImport.js';

export interface ImportSummary {
  tenantId: string;
  published: boolean;
  /** When the portfolio was replaced, ms since the epoch. */
  updatedAt: number;
  assets: number;
  /** Per list member of the document: how many items, and how many of them are published. */
  items: Record<ListMember, { total: number; published: number }>;
}

export interface ImportOptions {
  /** Source of the random ids given to list items that have none, and of a new portfolio's first revision. */
  randomBytes?: RandomBytes;
}

/**
 * Replaces the tenant's whole portfolio with `document` (parsed JSON in import format) in one
 * transaction. Throws PortfolioImportError listing every problem of an invalid document, or
 * StoreError('tenant_not_found'); in both cases nothing is written.
 */
export async function importPortfolio(
  source: StoreSource,
  tenantId: string,
  document: unknown,
  now: () => number = Date.now,
  options: ImportOptions = {},
): Promise<ImportSummary> {
  const problems = validatePortfolioDocument(document);
  if (problems.length > 0) throw new PortfolioImportError(problems);
  const randomBytes = options.randomBytes ?? defaultRandomBytes;
  const normalized = normalizePortfolioDocument(document as PortfolioDocumentInput, randomBytes);
  const updatedAt = now();
  await createPortfolioDocumentStore(source, { randomBytes }).replace(tenantId, renderPortfolio(normalized, updatedAt));

  const counts = Object.fromEntries(
    listMembers.map(([member]) => {
      const list = normalized[member] as { published: boolean }[];
      return [member, { total: list.length, published: list.filter((item) => item.published).length }];
    }),
  ) as ImportSummary['items'];
  return { tenantId, published: normalized.published, updatedAt, assets: normalized.assets.length, items: counts };
}

/**
 * The tenant's portfolio in import form, exactly as stored (sanitized HTML, generated ids, every
 * optional member present). Undefined when the tenant has never imported one; StoreError for an
 * unknown tenant.
 */
export async function exportPortfolio(source: StoreSource, tenantId: string): Promise<PortfolioDocument | undefined> {
  const sources = await createPortfolioDocumentStore(source).read(tenantId);
  if (!sources) return undefined;
  const lists = Object.fromEntries(listMembers.map(([member, kind]) => [member, sources.itemsByKind.get(kind) ?? []]));
  return {
    formatVersion: 1,
    published: sources.published,
    profile: sources.profile,
    assets: sources.assets,
    ...lists,
  } as PortfolioDocument;
}
